use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device d: [f32; n];
        stream s;
        on s {
            wait d;
        }
    }
}

fn main() {}
