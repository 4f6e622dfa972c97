// What the data-parallel examples share: the batch, the CPU's answer, and
// the step as two plans, one for `data_parallel` (this process drives
// every GPU) and one for `data_parallel_ranks` (a process per GPU). Each
// GPU takes its shard of the batch, computes its "gradient" (twice each
// element, by a kernel), and an all-reduce sums the gradients over the
// GPUs, on each of them.

use memplan::prelude::*;

/// Elements of each rank's shard, and so of the gradient.
pub const SHARD: usize = 1 << 22;

/// The batch for `ranks` ranks: whole numbers, so that every sum is exact
/// whatever order the all-reduce adds in.
pub fn batch(ranks: usize) -> Vec<f32> {
    (0..ranks * SHARD)
        .map(|i| (i % 1021) as f32 - 500.0)
        .collect()
}

/// The all-reduced gradient, as the CPU computes it.
pub fn expected(batch: &[f32], ranks: usize) -> Vec<f32> {
    (0..SHARD)
        .map(|i| (0..ranks).map(|r| 2.0 * batch[r * SHARD + i]).sum())
        .collect()
}

memplan! {
    /// The step on the `g` GPUs this process drives: GPU `i`'s part of
    /// the all-reduce is queued in iteration `i`, on its stream, and
    /// memplan queues the parts together (one NCCL group). `sums` gets
    /// every GPU's copy of the sum.
    pub plan DataParallel(shard: usize, g: usize) {
        gpus   gpu[g];
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
        host   batch: [f32; shard * g] pinned, sums: [f32; shard * g] pinned;
        device part[g]: [f32; shard] on gpu, gradient[g]: [f32; shard] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            let mine = i * shard..(i + 1) * shard;
            on s[i] {
                copy batch[mine] -> part[i];
                launch scale_by_two<<<blocks(shard, 256), 256>>>(part[i], gradient[i], shard as i32);
                all_reduce sum gradient[i];
                copy gradient[i] -> sums[mine];
            }
        }
    }
}

memplan! {
    /// The step of one rank of a job of one process per GPU: `new` joins
    /// the job's communicator (`ranks world`), and the all-reduce spans
    /// the processes.
    pub plan RankStep(shard: usize) {
        ranks  world;
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
        host   mine: [f32; shard] pinned, sum: [f32; shard] pinned;
        device part: [f32; shard], gradient: [f32; shard];
        stream s;
        on s {
            copy mine -> part;
            launch scale_by_two<<<blocks(shard, 256), 256>>>(part, gradient, shard as i32);
            all_reduce sum gradient;
            copy gradient -> sum;
        }
    }
}
