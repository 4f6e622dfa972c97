use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device d: [f32];
    }
}

fn main() {}
