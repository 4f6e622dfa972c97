// One parameter fewer than the C++ has: the driver would read past the
// argument array. The error shows the C++ and a declaration that matches.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel vadd(a: &[f32], c: &out [f32], n: i32) from memplan_kernels::VECTOR_ADD;
    }
}

fn main() {}
