// Copies between disjoint halves of one host buffer, synchronous and queued.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Halves(n: usize) {
        host a: [f32; n] pinned, b: [f32; n] pageable;
        stream s;
        copy b[..n / 2] -> b[n / 2..n / 2 + n / 2];
        on s {
            copy a[..n / 2] -> a[n / 2..n / 2 + n / 2];
        }
    }
}

fn main() {
    let _ = Halves::new;
}
