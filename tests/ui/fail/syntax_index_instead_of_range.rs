use memplan::memplan;

memplan! {
    plan P(n: usize) {
        host a: [f32; n] pinned;
        device da: [f32; n];
        copy a[3] -> da;
    }
}

fn main() {}
