// A kernel the module does not have: the error lists the ones it has.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel vsub(a: &[f32], b: &[f32], c: &out [f32], n: i32) from memplan_kernels::VECTOR_ADD;
    }
}

fn main() {}
