// A value where the C++ takes a pointer, and a buffer where it takes a value.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: i64, n: i32) from memplan_kernels::ADD_ONE;
        kernel scale_by_two(input: &[f32], output: &out [f32], n: &[i32]) from memplan_kernels::SCALE;
    }
}

fn main() {}
