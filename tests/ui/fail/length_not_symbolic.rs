use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device d: [f32; n.pow(2)];
    }
}

fn main() {}
