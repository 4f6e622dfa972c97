// `n: i32` against the C++ `unsigned int`, and `b: i32` for `unsigned int`.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel cpp_linkage(input: &[f64; n], output: &out [f64; n], n: i32) from memplan_kernels::SIGNATURES;
        kernel widths(out: &mut [u64; 1], a: u64, b: u32, c: usize, d: i16) from memplan_kernels::SIGNATURES;
    }
}

fn main() {}
