// The C++ kernel's parameters, each of its type, in another order: the
// error says to reorder them, with the declaration's own names and types.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel vadd(n: i32, a: &[f32; n], b: &[f32; n], c: &out [f32; n]) from memplan_kernels::VECTOR_ADD;
    }
}

fn main() {}
