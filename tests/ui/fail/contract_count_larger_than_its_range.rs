// `process_data` touches `n` elements of `data` (its contract), and the
// launch gives it 2^24 for a buffer of one element.
use memplan::memplan;

memplan! {
    plan P() {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device one: [f32; 1];
        fill one with 0.0;
        launch process_data<<<1, 256>>>(one, 16777216 as i32);
    }
}

fn main() {}
