// A set of host or stream-ordered buffers is one error, at its count,
// however the plan uses it: as one buffer or element by element.
use memplan::memplan;

memplan! {
    plan Sets(n: usize, k: usize) {
        host   h[2]: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        on s {
            alloc t[2]: [f32; n];
            copy h -> t;
            copy t -> d;
            free t;
        }
        for c in 0..k {
            on s { copy d -> h[c % 2]; }
        }
        sync s;
    }
}

fn main() {}
