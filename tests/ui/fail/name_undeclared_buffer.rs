use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device da: [f32; n];
        copy a -> da;
    }
}

fn main() {}
