use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host a: [f32; n] pinned, c: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        copy a -> d;
        on s {
            launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
        }
        copy d -> c;
    }
}

fn main() {}
