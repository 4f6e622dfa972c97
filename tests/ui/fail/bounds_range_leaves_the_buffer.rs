use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device d: [f32; n];
        fill d[0..=n] with 0.0;
        fill d[n / 2 + 1..n / 2] with 0.0;
    }
}

fn main() {}
