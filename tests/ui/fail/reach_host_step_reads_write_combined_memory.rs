use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host upload: [f32; n] pinned(write_combined);
        host(&upload) { let _ = upload[0]; }
    }
}

fn main() {}
