use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        device da: [f32; n];
        copy a da;
    }
}

fn main() {}
