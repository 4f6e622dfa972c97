use memplan::memplan;

memplan! {
    plan P(n: usize) {
        buffer a: [f32; n];
    }
}

fn main() {}
