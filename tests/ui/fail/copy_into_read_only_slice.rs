use memplan::memplan;

memplan! {
    plan P(n: usize, xs: &[f32; n]) {
        device d: [f32; n];
        fill d with 1.0;
        copy d -> xs;
    }
}

fn main() {}
