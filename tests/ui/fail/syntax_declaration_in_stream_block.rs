use memplan::memplan;

memplan! {
    plan P(n: usize) {
        stream s;
        on s {
            device d: [f32; n];
        }
    }
}

fn main() {}
