use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        device d: [i32; n];
        copy a -> d;
    }
}

fn main() {}
