use memplan::memplan;

// `(n / 2) * m` and `n / (2 * m)` are different values (0..8 and 2..8 for
// n = 8, m = 2): the two copies overlap and race.
memplan! {
    plan P(n: usize, m: usize) {
        host a: [f32; n] pinned;
        device d: [f32; n];
        stream s1, s2;
        on s1 { copy a[0..(n / 2) * m] -> d[0..(n / 2) * m]; }
        on s2 { copy a[n / (2 * m)..n] -> d[n / (2 * m)..n]; }
        sync all;
    }
}

fn main() {}
