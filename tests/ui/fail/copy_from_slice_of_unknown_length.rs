use memplan::memplan;

memplan! {
    plan P(n: usize, xs: &[f32]) {
        device d: [f32; n];
        copy xs -> d;
    }
}

fn main() {}
