use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        stream s;
        on s {
            launch process_data<<<1, 256, 0, s>>>(d, n as i32);
        }
    }
}

fn main() {}
