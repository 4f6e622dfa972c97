//! Several GPUs of one host, by hand: peer copies, and NCCL's collectives
//! driven by one thread for all GPUs or by a thread per GPU joined by a
//! unique id (as one process per GPU would be). Ignored, with the reason,
//! where there are fewer than two GPUs. NCCL must be loadable, with
//! `NCCL_NVLS_ENABLE` set (the GPU bundle's runner sets it to 0).

use crate::harness::GpuTest;
use libtest_mimic::Failed;
use memplan::nccl::{Collective, Communicator, ReduceOp, UniqueId, queue_together};
use memplan::{Context, DeviceBuffer, Stream, copy_peer, copy_peer_async};

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "multi_gpu::peer_copies_move_data_between_gpus",
        peer_copies_move_data_between_gpus,
    ),
    (
        "multi_gpu::all_reduce_sums_over_every_gpu",
        all_reduce_sums_over_every_gpu,
    ),
    (
        "multi_gpu::broadcast_gather_and_scatter",
        broadcast_gather_and_scatter,
    ),
    (
        "multi_gpu::sends_and_receives_around_a_ring",
        sends_and_receives_around_a_ring,
    ),
    (
        "multi_gpu::a_thread_per_gpu_joins_by_unique_id",
        a_thread_per_gpu_joins_by_unique_id,
    ),
    (
        "multi_gpu::another_gpus_buffer_is_refused",
        another_gpus_buffer_is_refused,
    ),
];

const N: usize = 1 << 20;

/// Held by each test while it runs: NCCL's kernels of two communicators
/// queued in different orders on two GPUs wait for each other forever, so
/// tests with communicators of their own must not run at once.
pub static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn contexts() -> Result<Vec<Context>, Failed> {
    (0..Context::count())
        .map(|i| Ok(Context::new(i)?))
        .collect()
}

/// `make(rank, context)` for each GPU, in rank order.
fn each<T>(
    gpus: &[Context],
    make: impl Fn(usize, &Context) -> memplan::Result<T>,
) -> memplan::Result<Vec<T>> {
    gpus.iter()
        .enumerate()
        .map(|(rank, ctx)| make(rank, ctx))
        .collect()
}

/// `make(rank, communicator)` for each rank: the parts of a collective.
fn each_rank<'a>(
    comms: &'a [Communicator],
    make: impl Fn(usize, &'a Communicator) -> memplan::Result<Collective<'a>>,
) -> memplan::Result<Vec<Collective<'a>>> {
    comms
        .iter()
        .enumerate()
        .map(|(rank, comm)| make(rank, comm))
        .collect()
}

/// `run(rank)` on a thread of its own for each of `count` ranks, as a
/// process per GPU would run; each result, or its error as text.
pub fn on_a_thread_each<T: Send>(
    count: usize,
    run: impl Fn(usize) -> memplan::Result<T> + Sync,
) -> Vec<Result<T, String>> {
    let run = &run;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..count)
            .map(|rank| scope.spawn(move || run(rank).map_err(|e| e.to_string())))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a rank panicked".to_owned()))
            })
            .collect()
    })
}

/// Rank `rank`'s input: whole numbers, so that sums are exact in any order.
fn input(rank: usize) -> Vec<f32> {
    (0..N)
        .map(|i| (i % 4093) as f32 - 2000.0 + rank as f32)
        .collect()
}

/// The element-wise sum of ranks `0..n`'s inputs.
fn sum_of_inputs(n: usize) -> Vec<f32> {
    let mut sum = vec![0.0; N];
    for rank in 0..n {
        for (s, x) in sum.iter_mut().zip(input(rank)) {
            *s += x;
        }
    }
    sum
}

fn peer_copies_move_data_between_gpus() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = contexts()?;
    let (a, b) = (&gpus[0], &gpus[1]);
    let peer = a.can_access_peer(b)? && b.can_access_peer(a)?;
    if peer {
        a.enable_peer_access(b)?;
        b.enable_peer_access(a)?;
        // Again: no error.
        a.enable_peer_access(b)?;
    }
    eprintln!("peer access between GPU 0 and 1: {peer}");
    let data = input(0);
    let on_a = DeviceBuffer::from_slice(a, &data)?;
    let on_b = DeviceBuffer::<f32>::zeroed(b, N)?;
    let stream = Stream::new(a)?;
    // SAFETY: both buffers live past the synchronize below, and nothing
    // else touches them meanwhile.
    unsafe { copy_peer_async(&stream, &on_a, &on_b)? };
    stream.synchronize()?;
    ensure!(
        on_b.to_vec()? == data,
        "GPU 1 holds other data than GPU 0 sent"
    );
    let mut back = DeviceBuffer::<f32>::zeroed(a, N)?;
    copy_peer(&on_b, &mut back)?;
    ensure!(back.to_vec()? == data, "the copy back differs");
    // A scope's device-to-device copy between two GPUs' memories (unified
    // addressing: each pointer names its GPU), ordered like any other;
    // seen to work with peer access on (2 x H200), not yet tried without.
    let scoped = DeviceBuffer::<f32>::zeroed(b, N)?;
    memplan::scope(|s| s.copy(&stream, &on_a, &scoped))?;
    ensure!(
        scoped.to_vec()? == data,
        "a scope's copy between GPUs differs"
    );
    let mut short = DeviceBuffer::<f32>::zeroed(b, N / 2)?;
    let error = copy_peer(&on_a, &mut short).expect_err("lengths differ");
    ensure!(
        error.to_string().contains("copy_peer"),
        "the error does not name the call: {error}"
    );
    Ok(())
}

fn all_reduce_sums_over_every_gpu() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = contexts()?;
    let comms = Communicator::all(&gpus)?;
    let streams = each(&gpus, |_, ctx| Stream::new(ctx))?;
    let sends = each(&gpus, |rank, ctx| {
        DeviceBuffer::from_slice(ctx, &input(rank))
    })?;
    let recvs = each(&gpus, |_, ctx| DeviceBuffer::<f32>::zeroed(ctx, N))?;
    let parts = each_rank(&comms, |rank, comm| {
        comm.all_reduce(&sends[rank], &recvs[rank], ReduceOp::Sum, &streams[rank])
    })?;
    // SAFETY: every buffer outlives the synchronize below.
    unsafe { queue_together(parts)? };
    for stream in &streams {
        stream.synchronize()?;
    }
    let expected = sum_of_inputs(gpus.len());
    for (rank, recv) in recvs.iter().enumerate() {
        ensure!(
            recv.to_vec()? == expected,
            "rank {rank}'s sum differs from the CPU's"
        );
    }
    // In place, the maximum: the last rank's input.
    let parts = each_rank(&comms, |rank, comm| {
        comm.all_reduce(&sends[rank], &sends[rank], ReduceOp::Max, &streams[rank])
    })?;
    // SAFETY: as above.
    unsafe { queue_together(parts)? };
    for stream in &streams {
        stream.synchronize()?;
    }
    let top = input(gpus.len() - 1);
    ensure!(sends[0].to_vec()? == top, "the in-place max differs");
    Ok(())
}

fn broadcast_gather_and_scatter() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = contexts()?;
    let n = gpus.len();
    let comms = Communicator::all(&gpus)?;
    let streams = each(&gpus, |_, ctx| Stream::new(ctx))?;
    let sends = each(&gpus, |rank, ctx| {
        DeviceBuffer::from_slice(ctx, &input(rank))
    })?;
    let copies = each(&gpus, |_, ctx| DeviceBuffer::<f32>::zeroed(ctx, N))?;
    let gathered = each(&gpus, |_, ctx| DeviceBuffer::<f32>::zeroed(ctx, N * n))?;
    let blocks = each(&gpus, |_, ctx| DeviceBuffer::<f32>::zeroed(ctx, N / n))?;
    let scattered_from = each(&gpus, |rank, ctx| {
        DeviceBuffer::from_slice(ctx, &input(rank)[..N / n * n])
    })?;
    for step in 0..3 {
        let parts = each_rank(&comms, |rank, comm| {
            let stream = &streams[rank];
            match step {
                0 => comm.broadcast(&sends[rank], &copies[rank], 1, stream),
                1 => comm.all_gather(&sends[rank], &gathered[rank], stream),
                _ => {
                    comm.reduce_scatter(&scattered_from[rank], &blocks[rank], ReduceOp::Sum, stream)
                }
            }
        })?;
        // SAFETY: every buffer outlives the synchronize below.
        unsafe { queue_together(parts)? };
    }
    for stream in &streams {
        stream.synchronize()?;
    }
    let all: Vec<f32> = (0..n).flat_map(input).collect();
    let sum = sum_of_inputs(n);
    for rank in 0..n {
        ensure!(
            copies[rank].to_vec()? == input(1),
            "rank {rank}: not rank 1's broadcast"
        );
        ensure!(
            gathered[rank].to_vec()? == all,
            "rank {rank}: the gather differs"
        );
        let block = N / n;
        let expected = &sum[rank * block..(rank + 1) * block];
        ensure!(
            blocks[rank].to_vec()? == expected,
            "rank {rank}: its block of the sum differs"
        );
    }
    Ok(())
}

fn sends_and_receives_around_a_ring() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = contexts()?;
    let n = gpus.len();
    let comms = Communicator::all(&gpus)?;
    let streams = each(&gpus, |_, ctx| Stream::new(ctx))?;
    let sends = each(&gpus, |rank, ctx| {
        DeviceBuffer::from_slice(ctx, &input(rank))
    })?;
    let recvs = each(&gpus, |_, ctx| DeviceBuffer::<f32>::zeroed(ctx, N))?;
    // Each rank sends to the next and receives from the one before: in one
    // group, or every rank would wait for its receiver.
    let mut parts = Vec::new();
    for (rank, comm) in comms.iter().enumerate() {
        parts.push(comm.send(&sends[rank], (rank + 1) % n, &streams[rank])?);
        parts.push(comm.recv(&recvs[rank], (rank + n - 1) % n, &streams[rank])?);
    }
    // SAFETY: every buffer outlives the synchronize below.
    unsafe { queue_together(parts)? };
    for stream in &streams {
        stream.synchronize()?;
    }
    for (rank, recv) in recvs.iter().enumerate() {
        ensure!(
            recv.to_vec()? == input((rank + n - 1) % n),
            "rank {rank} did not receive the previous rank's data"
        );
    }
    let error = comms[0]
        .send(&sends[0], 0, &streams[0])
        .err()
        .ok_or("a send to itself was accepted")?;
    ensure!(error.to_string().contains("ncclSend"), "{error}");
    Ok(())
}

fn a_thread_per_gpu_joins_by_unique_id() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let n = Context::count();
    let ready = each(&contexts()?, |rank, ctx| {
        Ok((
            ctx.clone(),
            Stream::new(ctx)?,
            DeviceBuffer::from_slice(ctx, &input(rank))?,
        ))
    })?;
    let ready = &ready;
    let id = UniqueId::new()?;
    // As a launcher would: the id travels as bytes.
    let bytes = id.to_bytes();
    let results = on_a_thread_each(n, |rank| {
        // Everything that can fail is made before joining: a rank that
        // never joins leaves the others waiting.
        let (ctx, stream, data) = &ready[rank];
        let comm = Communicator::join(ctx, &UniqueId::from_bytes(bytes), n, rank)?;
        let part = comm.all_reduce(data, data, ReduceOp::Sum, stream)?;
        // SAFETY: `data` outlives the synchronize below.
        unsafe { part.queue()? };
        stream.synchronize()?;
        data.to_vec()
    });
    let expected = sum_of_inputs(n);
    for (rank, result) in results.into_iter().enumerate() {
        ensure!(result? == expected, "rank {rank}'s sum differs");
    }
    Ok(())
}

fn another_gpus_buffer_is_refused() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = contexts()?;
    let comms = Communicator::all(&gpus)?;
    let stream = Stream::new(&gpus[0])?;
    let theirs = DeviceBuffer::<f32>::zeroed(&gpus[1], 16)?;
    let error = comms[0]
        .all_reduce(&theirs, &theirs, ReduceOp::Sum, &stream)
        .err()
        .ok_or("GPU 1's buffer was accepted on GPU 0's communicator")?;
    ensure!(
        error.to_string().contains("ncclAllReduce") && error.to_string().contains("another GPU"),
        "{error}"
    );
    Ok(())
}
