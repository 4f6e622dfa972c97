use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        on s {
            copy a -> d;
        }
        host(&mut a) { a[0] = 1.0; }
        sync s;
    }
}

fn main() {}
