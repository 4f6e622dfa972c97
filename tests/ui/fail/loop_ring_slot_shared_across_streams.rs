// A ring of `s` slots on `2 * s` streams: chunks `c` and `c + s` share a
// slot, on different streams, with nothing ordering them.
use memplan::memplan;

memplan! {
    plan Ring(m: usize, k: usize, s: usize) {
        host   input: [f32; k * m] pinned, output: [f32; k * m] pinned;
        device slot[s]: [f32; m];
        stream lanes[2 * s];
        for c in 0..k {
            on lanes[c % (2 * s)] {
                copy input[c * m..c * m + m] -> slot[c % s];
                copy slot[c % s] -> output[c * m..c * m + m];
            }
        }
    }
}

fn main() {}
