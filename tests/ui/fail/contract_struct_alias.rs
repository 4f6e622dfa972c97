// `struct Target { float *out; int n; }` is 16 bytes aligned to 8, as
// `[u64; 2]` is: an alias of the same size would let a plan hand the
// kernel any number as the pointer it writes through. A class matches only
// a Rust type whose `unsafe impl KernelValue` names it.
use memplan::memplan;

#[allow(non_camel_case_types)]
type Target = [u64; 2];

memplan! {
    plan P(target: Target) {
        kernel through_target(target: Target) from memplan_kernels::CLASSES;
        launch through_target<<<1, 256>>>(target);
    }
}

fn main() {}
