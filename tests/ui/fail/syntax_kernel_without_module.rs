use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel vadd(a: &[f32], n: i32);
    }
}

fn main() {}
