use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned, b: [f32; n] pinned;
        device d: [f32; n];
        stream s1, s2;
        on s1 {
            copy a -> d;
        }
        on s2 {
            copy b -> d;
        }
    }
}

fn main() {}
