// A declaration whose image path names nothing: one error, at the path.
use memplan::memplan;

memplan! {
    plan AddOne(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONEE;
        device d: [f32; n];
        fill d with 0.0;
        launch process_data<<<memplan::blocks(n, 256), 256>>>(d, n as i32);
    }
}

fn main() {}
