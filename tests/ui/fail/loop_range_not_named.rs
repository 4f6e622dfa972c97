// `a[chunk]` where the loop names no range `chunk` (it named `part`): the
// range is what is missing, not a set.
use memplan::memplan;

memplan! {
    plan B(n: usize, m: usize, k: usize) {
        host   a: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        for c in 0..k {
            let part = c * m..min(c * m + m, n);
            on s {
                copy a[chunk] -> d[part];
            }
        }
    }
}

fn main() {}
