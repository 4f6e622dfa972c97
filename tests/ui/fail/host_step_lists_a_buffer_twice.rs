use memplan::memplan;

memplan! {
    plan P(n: usize, xs: &[f32; n]) {
        host a: [f32; n] pinned;
        host(&mut a, &a) { a[0] = 1.0; }
        host(&mut xs) { xs[0] = 1.0; }
    }
}

fn main() {}
