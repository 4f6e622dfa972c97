use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] locked;
    }
}

fn main() {}
