// Every process of a `ranks` job runs the same plan: every rank sends to
// rank 1 and receives from rank 0, so no send meets its receive, and the
// job would wait for ever. Refused, naming both ops.
use memplan::memplan;

memplan! {
    plan Pairs(n: usize) {
        ranks  world;
        device a: [f32; n], b: [f32; n];
        stream s;
        on s {
            fill a with 1.0;
            send a to 1;
            recv b from 0;
        }
    }
}

fn main() {}
