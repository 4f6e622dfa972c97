// A stream-ordered buffer is freed, then allocated again under the same
// name on another stream, after an event: two lifetimes, both checked.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Scratch(n: usize) {
        host a: [f32; n] pinned, b: [f32; n] pinned;
        stream s1, s2;
        event released;
        on s1 {
            alloc tmp: [f32; n];
            copy a -> tmp;
            copy tmp -> b;
            free tmp;
            record released;
        }
        on s2 {
            wait released;
            alloc tmp: [f32; 2 * n];
            copy b -> tmp[..n];
            copy tmp[..n] -> a;
            free tmp;
        }
    }
}

fn main() {
    let _ = Scratch::new;
}
