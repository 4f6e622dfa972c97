use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned(mapped, cached);
    }
}

fn main() {}
