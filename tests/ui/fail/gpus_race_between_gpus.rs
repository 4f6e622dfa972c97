// GPU 0 copies its result into GPU 1's memory while a kernel on GPU 1
// writes the same buffer, and no event orders the two: a race across GPUs
// is a race like any other.
use memplan::memplan;

memplan! {
    plan Handoff(n: usize) {
        gpus   gpu[2];
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   x: [f32; n] pinned, y: [f32; n] pinned;
        device a: [f32; n] on gpu[0], b: [f32; n] on gpu[1];
        stream first on gpu[0], second on gpu[1];
        on first { copy x -> a; copy a -> b; }
        on second {
            copy x -> b;
            launch process_data<<<blocks(n, 256), 256>>>(b, n as i32);
            copy b -> y;
        }
    }
}

fn main() {}
