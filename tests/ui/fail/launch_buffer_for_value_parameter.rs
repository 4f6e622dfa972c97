use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        fill d with 1.0;
        launch process_data<<<blocks(n, 256), 256>>>(d, d);
    }
}

fn main() {}
