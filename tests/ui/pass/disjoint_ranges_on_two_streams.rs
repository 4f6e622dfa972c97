// Two streams write the two halves of one buffer: the ranges cannot
// overlap, so nothing needs to order them.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Halves(n: usize) {
        host a: [f32; n] pinned, b: [f32; n] pinned;
        device d: [f32; n];
        stream first, second;
        on first {
            copy a[..n / 2] -> d[..n / 2];
        }
        on second {
            copy a[n / 2..] -> d[n / 2..];
        }
        sync all;
        copy d -> b;
    }
}

fn main() {
    let _ = Halves::new;
}
