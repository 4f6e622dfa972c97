// NCCL collectives as plan operations, in both forms: a plan that drives
// every GPU of the process (each rank's part in its loop iteration, on
// its GPU's stream), and a plan that is one rank of a job of one process
// per GPU.
use memplan::prelude::*;

memplan! {
    /// The data-parallel step: each GPU scales its shard, the shards are
    /// summed on every GPU, and each GPU's sum comes back.
    plan DataParallel(n: usize, g: usize) {
        gpus   gpu[g];
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
        host   x: [f32; n * g] pinned, y: [f32; n * g] pinned;
        device part[g]: [f32; n] on gpu, doubled[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                copy x[i * n..i * n + n] -> part[i];
                launch scale_by_two<<<blocks(n, 256), 256>>>(part[i], doubled[i], n as i32);
                all_reduce sum doubled[i];
                copy doubled[i] -> y[i * n..i * n + n];
            }
        }
    }
}

memplan! {
    /// Every other collective, once each: a ring of sends, a broadcast
    /// in place, a gather and a reduce-scatter.
    plan EveryCollective(n: usize, g: usize) {
        gpus   gpu[g];
        host   x: [i32; n] pinned, y: [i32; n * g * g] pinned;
        device mine[g]: [i32; n] on gpu, left[g]: [i32; n] on gpu, all[g]: [i32; n * g] on gpu,
               block[g]: [i32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                copy x -> mine[i];
                send mine[i] to (i + 1) % g;
                recv left[i] from (i + g - 1) % g;
                broadcast left[i] from 0;
                all_gather left[i] -> all[i];
                reduce_scatter max all[i] -> block[i];
                copy all[i] -> y[i * n * g..(i + 1) * n * g];
            }
        }
    }
}

memplan! {
    /// One rank of a job: the process's GPU's part of each collective.
    plan Rank(n: usize) {
        ranks  world;
        host   x: [f32; n] pinned;
        device grads: [f32; n], sums: [f32; n];
        stream s;
        on s {
            copy x -> grads;
            all_reduce avg grads -> sums;
            // In place: the root's `sums` is read, and written above.
            broadcast sums from 0;
            copy sums -> x;
        }
    }
}

fn main() {
    // Without a GPU, the plans are only made to compile; the GPU tests run them.
    let _ = (DataParallel::new, EveryCollective::new, Rank::new);
}
