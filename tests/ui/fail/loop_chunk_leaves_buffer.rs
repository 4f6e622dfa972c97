// `k` chunks of `m` elements of an `n`-element buffer: for a `k` with
// `k * m > n` the last chunks reach past its end.
use memplan::memplan;

memplan! {
    plan Chunks(n: usize, m: usize, k: usize, s: usize) {
        host   a: [f32; n] pinned;
        device d: [f32; n];
        stream lanes[s];
        for c in 0..k {
            on lanes[c % s] {
                copy a[c * m..(c + 1) * m] -> d[c * m..(c + 1) * m];
            }
        }
    }
}

fn main() {}
