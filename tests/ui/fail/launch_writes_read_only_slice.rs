use memplan::memplan;

memplan! {
    plan P(n: usize, xs: &[f32; n]) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        launch process_data<<<blocks(n, 256), 256>>>(xs, n as i32);
    }
}

fn main() {}
