use memplan::memplan;

memplan! {
    plan P(n: usize, xs: &[f32; n]) {
        device d: [f32; n];
        stream s;
        on s {
            copy xs -> d;
        }
    }
}

fn main() {}
