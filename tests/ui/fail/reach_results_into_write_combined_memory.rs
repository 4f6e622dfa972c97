use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host results: [f32; n] pinned(write_combined);
        device d: [f32; n];
        fill d with 1.0;
        copy d -> results;
    }
}

fn main() {}
