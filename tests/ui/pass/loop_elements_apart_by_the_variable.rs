// Iteration `i` uses buffer `part[i]` on stream `s[i + 1]`: two iterations
// never share an element of a set indexed by the variable itself (or by
// `2 * i + 1`), so nothing needs ordering between them.
use memplan::memplan;

memplan! {
    plan Shifted(n: usize, g: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device part[g]: [f32; n], odd[2 * g + 1]: [f32; n];
        stream s[g];
        for i in 0..g - 1 {
            on s[i + 1] {
                fill part[i] with 0.0;
                launch process_data<<<blocks(n, 256), 256>>>(part[i], n as i32);
                fill odd[2 * i + 1] with 1.0;
            }
        }
    }

    /// The same over GPUs: shard `i` on GPU `i`, and each shard passed to
    /// the next GPU's memory on that GPU's stream.
    plan PassOn(n: usize, g: usize) {
        gpus   gpu[g];
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   x: [f32; n * g] pinned;
        device part[g]: [f32; n] on gpu, next[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                copy x[i * n..i * n + n] -> part[i];
                launch process_data<<<blocks(n, 256), 256>>>(part[i], n as i32);
                copy part[i] -> next[i];
                copy next[i] -> x[i * n..i * n + n];
            }
        }
    }
}

fn main() {}
