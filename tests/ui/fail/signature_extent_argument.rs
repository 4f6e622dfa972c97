// An extent names `n`, so its argument must be a size of the plan, which
// `new` can compare with what the kernel receives; a call is not one.
use memplan::memplan;

fn count() -> i32 {
    4
}

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        fill d with 0.0;
        launch process_data<<<1, 256>>>(d, count());
    }
}

fn main() {}
