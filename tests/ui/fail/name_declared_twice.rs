use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        device a: [f32; n];
    }
}

fn main() {}
