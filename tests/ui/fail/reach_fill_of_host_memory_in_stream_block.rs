use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        stream s;
        on s {
            fill a with 0.0;
        }
    }
}

fn main() {}
