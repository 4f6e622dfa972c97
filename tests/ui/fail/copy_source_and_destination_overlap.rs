use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device d: [f32; n];
        fill d with 1.0;
        copy d[0..n / 2] -> d[1..n / 2 + 1];
    }
}

fn main() {}
