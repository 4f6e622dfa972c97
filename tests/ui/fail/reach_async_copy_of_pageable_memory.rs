use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pageable;
        device d: [f32; n];
        stream s;
        on s {
            copy a -> d;
        }
    }
}

fn main() {}
