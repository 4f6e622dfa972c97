// Extents count elements with the kernel's integer value parameters:
// not a name the kernel lacks, not a float, not another slice.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel a(data: &mut [f32; m], n: i32) from memplan_kernels::ADD_ONE as "process_data";
        kernel b(input: &[f32; factor], output: &out [f32; n], factor: f32, n: i32)
            from memplan_kernels::SIGNATURES as "scaled<float>";
        kernel c(input: &[f32; output], output: &out [f32; n], n: i32) from memplan_kernels::SIGNATURES as "c_linkage";
        kernel d(data: &mut [f32; n.max(1)], n: i32) from memplan_kernels::ADD_ONE as "process_data";
    }
}

fn main() {}
