use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned, b: [f32; n] pinned;
        device d: [f32; n];
        copy a[..n / 2] -> d[..n / 2];
        copy d -> b;
    }
}

fn main() {}
