// What each rank (GPU) of the data-parallel examples does, shared by
// `data_parallel` (one thread drives every GPU) and `data_parallel_ranks`
// (a process per GPU): take its shard of the batch, compute its
// "gradient" (twice each element, by a kernel), which an all-reduce then
// sums over the ranks.

use memplan::{Context, DeviceBuffer, Kernel, LaunchConfig, Module, ResultExt, Stream, blocks};

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

/// One GPU's part: its stream, and its gradient, being computed on it.
pub struct Rank {
    pub stream: Stream,
    pub gradient: DeviceBuffer<f32>,
    /// Read by the kernel queued on `stream`, and the kernel (with its
    /// module): kept until the rank is done.
    _shard: DeviceBuffer<f32>,
    _kernel: Kernel,
}

impl Rank {
    /// Uploads `shard` to `ctx`'s GPU and queues the kernel that computes
    /// the rank's gradient from it.
    pub fn start(ctx: &Context, shard: &[f32]) -> memplan::Result<Rank> {
        let stream = Stream::new(ctx)?;
        let input = DeviceBuffer::from_slice(ctx, shard)?;
        let gradient = DeviceBuffer::<f32>::zeroed(ctx, shard.len())?;
        let module = Module::from_image(ctx, &memplan_kernels::SCALE)?;
        let kernel = module.kernel("scale_by_two")?;
        let config = LaunchConfig::new(blocks(shard.len(), 256), 256, 0);
        // SAFETY: scale_by_two(const float *in, float *out, int n) reads
        // and writes `n` floats of the two buffers, which the rank keeps
        // until its stream is done.
        unsafe {
            kernel.launch(
                &stream,
                config,
                (
                    input.device_ptr(),
                    gradient.device_ptr(),
                    shard.len() as i32,
                ),
            )
        }
        .at("launch scale_by_two", memplan::Location::caller())?;
        Ok(Rank {
            stream,
            gradient,
            _shard: input,
            _kernel: kernel,
        })
    }
}
