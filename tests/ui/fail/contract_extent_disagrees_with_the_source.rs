// add_one.cu says `MEMPLAN_UPDATES(n) float *data`: the kernel touches `n`
// elements. A declaration that says one (or nothing) is refused, so that
// the launch below cannot pass 2^24 for a one-element buffer.
use memplan::memplan;

memplan! {
    plan One() {
        kernel process_data(data: &mut [f32; 1], n: i32) from memplan_kernels::ADD_ONE;
        device one: [f32; 1];
        fill one with 0.0;
        launch process_data<<<1, 256>>>(one, 16777216 as i32);
    }

    plan Unstated() {
        kernel process_data(data: &mut [f32], n: i32) from memplan_kernels::ADD_ONE;
        device one: [f32; 1];
        fill one with 0.0;
        launch process_data<<<1, 256>>>(one, 16777216 as i32);
    }
}

fn main() {}
