// Each op written where it cannot run is one error at the op, and the
// plan's other ops are still read: a `free` and a `wait` on the host, and
// stream-ordered memory allocated and freed in a loop's stream block.
use memplan::memplan;

memplan! {
    plan Outside(n: usize) {
        host a: [f32; n] pinned;
        stream s;
        event ready;
        on s {
            alloc tmp: [f32; n];
            copy a -> tmp;
            record ready;
        }
        wait ready;
        free tmp;
    }
}

memplan! {
    plan InALoop(n: usize, k: usize) {
        host a: [f32; n] pinned;
        stream s;
        for c in 0..k {
            on s {
                alloc tmp: [f32; n];
                copy a -> tmp;
                free tmp;
            }
        }
    }
}

fn main() {}
