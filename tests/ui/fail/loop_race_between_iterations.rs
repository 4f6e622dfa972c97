// Every iteration stages its chunk in the same part of `staging`, on a
// stream of its own: a later iteration may overwrite it while an earlier
// one still copies it out.
use memplan::memplan;

memplan! {
    plan Staged(n: usize, m: usize, k: usize, s: usize) {
        host   a: [f32; k * m] pinned, b: [f32; k * m] pinned;
        device staging: [f32; m];
        stream lanes[s];
        for c in 0..k {
            on lanes[c % s] {
                copy a[c * m..(c + 1) * m] -> staging;
                copy staging -> b[c * m..(c + 1) * m];
            }
        }
    }
}

fn main() {}
