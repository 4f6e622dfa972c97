// `uncontracted(float *data, int n)` states nothing about `data`: how far
// the kernel reaches is a fact only its body knows, so a safe declaration
// cannot state it. `unsafe kernel` is the way, and it is the user's promise.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel uncontracted(data: &mut [f32; n], n: i32) from memplan_kernels::SIGNATURES;
        device d: [f32; n];
        fill d with 0.0;
        launch uncontracted<<<blocks(n, 256), 256>>>(d, n as i32);
    }
}

fn main() {}
