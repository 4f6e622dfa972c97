// `c - min(c, 1)` is 0 for both `c = 0` and `c = 1`: two iterations on
// different streams write `buf[0]`, and nothing orders them.
use memplan::memplan;

memplan! {
    plan Folded(n: usize, k: usize) {
        device buf[k]: [f32; n];
        stream lanes[k];
        for c in 0..k {
            on lanes[c] {
                fill buf[c - min(c, 1)] with 1.0;
            }
        }
    }
}

fn main() {}
