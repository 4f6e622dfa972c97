use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device d: [f32; n];
        fill d with 1.0;
        host(&d) { let _ = d; }
    }
}

fn main() {}
