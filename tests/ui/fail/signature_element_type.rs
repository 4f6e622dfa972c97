// `&[f64]` for the C++ `const float *`: the kernel would read half as many
// elements as the plan thinks, each from two.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel scale_by_two(input: &[f64; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
    }
}

fn main() {}
