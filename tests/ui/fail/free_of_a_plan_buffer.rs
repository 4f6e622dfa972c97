use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device d: [f32; n];
        stream s;
        on s {
            fill d with 0.0;
            free d;
        }
    }
}

fn main() {}
