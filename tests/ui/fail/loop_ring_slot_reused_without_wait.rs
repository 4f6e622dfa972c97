// Chunk `c` goes into ring buffer `c % r`; uploads run on their own
// stream, so the upload of chunk `c + r` may overwrite buffer `c % r`
// while chunk `c`'s download still reads it: nothing waits for it.
use memplan::memplan;

memplan! {
    plan Ring(n: usize, m: usize, k: usize, r: usize) {
        host   input: [f32; k * m] pinned, output: [f32; k * m] pinned;
        device ring[r]: [f32; m];
        stream up, lanes[r];
        event  loaded[r];
        for c in 0..k {
            on up {
                copy input[c * m..(c + 1) * m] -> ring[c % r];
                record loaded[c % r];
            }
            on lanes[c % r] {
                wait loaded[c % r];
                copy ring[c % r] -> output[c * m..(c + 1) * m];
            }
        }
    }
}

fn main() {}
