// Two loops in one plan: one error, at the second.
use memplan::memplan;

memplan! {
    plan Twice(n: usize, m: usize, k: usize) {
        host   a: [f32; n] pinned, b: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        for c in 0..k {
            on s { copy a[c * m..(c + 1) * m] -> d[c * m..(c + 1) * m]; }
        }
        for c in 0..k {
            on s { copy d[c * m..(c + 1) * m] -> b[c * m..(c + 1) * m]; }
        }
    }
}

fn main() {}
