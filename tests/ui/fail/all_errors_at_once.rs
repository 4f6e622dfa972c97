use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host a: [f32; n] pageable, c: [f32; n] pinned;
        device d: [f32; n], e: [i32; n];
        stream s1, s2;
        on s1 {
            copy a -> d;
            launch process_data<<<blocks(n, 256), 256>>>(e, n as i32);
        }
        on s2 {
            copy d -> c;
        }
    }
}

fn main() {}
