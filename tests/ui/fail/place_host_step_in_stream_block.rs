use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        stream s;
        on s {
            host(&a) { let _ = a; }
        }
    }
}

fn main() {}
