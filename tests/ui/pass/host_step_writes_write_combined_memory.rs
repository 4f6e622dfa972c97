// A host step that only writes write-combined memory borrows it `&out`:
// the one borrow the host may take of it, and it counts as writing it all.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Upload(n: usize, scale: f32) {
        host staging: [f32; n] pinned(write_combined);
        device d: [f32; n];
        host(&out staging) {
            staging.fill(scale);
        }
        copy staging -> d;
    }
}

fn main() {
    let _ = Upload::new;
}
