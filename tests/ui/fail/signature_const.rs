// `&[f32]` promises the kernel only reads the buffer; the C++ `float *`
// lets it write. (The other way, `&mut` for a `const float *`, says
// something false too.)
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &[f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        kernel scale_by_two(input: &mut [f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
    }
}

fn main() {}
