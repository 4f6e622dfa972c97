use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned, c: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        on s {
            copy a -> d;
            copy d -> c;
        }
        host(&c) { let _ = c[0]; }
    }
}

fn main() {}
