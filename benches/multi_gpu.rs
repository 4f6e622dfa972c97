//! Several GPUs of one host, against the raw calls, in one process:
//!
//! 1. Peer copies GPU 0 -> GPU 1 (peer access on where the GPUs allow
//!    it): `memplan::copy_peer_async` against `cuMemcpyPeerAsync` on the
//!    same stream, alternating, each timed by the host clock around the
//!    copy and a stream sync (as `benches/bandwidth` does).
//! 2. All-reduce (sum of f32) over every GPU, one thread driving all:
//!    `Communicator::all_reduce` in a `group` against `ncclAllReduce`
//!    called directly (NCCL loaded by this benchmark itself) on
//!    communicators of its own, alternating; bus bandwidth as NCCL's tests
//!    count it, bytes * 2(n-1)/n over the time.
//!
//! Sizes 1 MiB to 1 GiB; medians; the ratio of memplan's bandwidth to
//! raw's. Needs two GPUs and `NCCL_NVLS_ENABLE` set (to 0 on shared
//! machines). Run it with `benches/multi_gpu` in the gpu-bundle.

#[path = "../examples/common/mod.rs"]
mod common;

use common::median;
use libloading::Library;
use memplan::nccl::{Communicator, ReduceOp, queue_together};
use memplan::sys as cu;
use memplan::{Context, DeviceBuffer, Stream, copy_peer_async};
use std::ffi::{c_int, c_void};
use std::time::Instant;

const MIB: usize = 1 << 20;
const SIZES: [usize; 4] = [MIB, 16 * MIB, 256 * MIB, 1024 * MIB];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count = Context::count();
    if count < 2 {
        match Context::missing_gpu() {
            Some(why) => println!("multi_gpu: skipped, needs 2 GPUs: {why}"),
            None => println!("multi_gpu: skipped, needs 2 GPUs and the driver sees {count}"),
        }
        return Ok(());
    }
    let gpus: Vec<Context> = (0..count).map(Context::new).collect::<Result<_, _>>()?;
    println!(
        "multi_gpu on {count} x {}, NCCL {:?}",
        gpus[0].device_name()?,
        memplan::nccl::version()?
    );
    peer_copies(&gpus)?;
    all_reduce(&gpus)?;
    Ok(())
}

fn peer_copies(gpus: &[Context]) -> Result<(), Box<dyn std::error::Error>> {
    let (a, b) = (&gpus[0], &gpus[1]);
    let peer = a.can_access_peer(b)?;
    if peer {
        a.enable_peer_access(b)?;
        b.enable_peer_access(a)?;
    }
    println!(
        "\npeer copies GPU 0 -> GPU 1 (peer access {}):",
        if peer { "on" } else { "not possible" }
    );
    println!(
        "{:>9} {:>10} {:>13} {:>15}",
        "size", "raw GB/s", "memplan GB/s", "memplan/raw"
    );
    let stream = Stream::new(a)?;
    let (context_a, context_b) = (raw_context(a), raw_context(b));
    let mut worst = f64::INFINITY;
    for bytes in SIZES {
        let src = DeviceBuffer::<u8>::zeroed(a, bytes)?;
        let dst = DeviceBuffer::<u8>::zeroed(b, bytes)?;
        let raw_copy = || {
            // SAFETY: both buffers hold `bytes` bytes and outlive the sync.
            let status = unsafe {
                cuMemcpyPeerAsync(
                    dst.device_ptr().as_raw(),
                    context_b,
                    src.device_ptr().as_raw(),
                    context_a,
                    bytes,
                    stream.raw(),
                )
            };
            assert_eq!(status, 0, "cuMemcpyPeerAsync");
            Ok(())
        };
        // SAFETY: as above.
        let ours = || unsafe { copy_peer_async(&stream, &src, &dst) };
        let (raw, memplan) = alternate(reps(bytes), &stream, raw_copy, ours)?;
        let (raw_gb, our_gb) = (bytes as f64 / raw / 1e9, bytes as f64 / memplan / 1e9);
        worst = worst.min(our_gb / raw_gb);
        println!(
            "{:>5} MiB {raw_gb:>10.2} {our_gb:>13.2} {:>15.3}",
            bytes / MIB,
            our_gb / raw_gb
        );
    }
    println!("worst memplan/raw bandwidth: {worst:.3}");
    Ok(())
}

// The raw driver call, its status a plain integer (cust's enum cannot hold
// every code a newer driver returns).
unsafe extern "C" {
    fn cuMemcpyPeerAsync(
        dst: cu::CUdeviceptr,
        dst_context: cu::CUcontext,
        src: cu::CUdeviceptr,
        src_context: cu::CUcontext,
        bytes: usize,
        stream: cu::CUstream,
    ) -> u32;
}

/// The raw NCCL calls of the baseline.
struct RawNccl {
    _library: Library,
    init_all: unsafe extern "C" fn(*mut *mut c_void, c_int, *const c_int) -> u32,
    all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        u32,
        u32,
        *mut c_void,
        *mut c_void,
    ) -> u32,
    group_start: unsafe extern "C" fn() -> u32,
    group_end: unsafe extern "C" fn() -> u32,
}

impl RawNccl {
    fn load() -> Result<RawNccl, Box<dyn std::error::Error>> {
        let path = std::env::var("MEMPLAN_NCCL").unwrap_or_else(|_| "libnccl.so.2".to_owned());
        // SAFETY: the same library memplan loads; types as in nccl.h.
        unsafe {
            let library = Library::new(&path)?;
            Ok(RawNccl {
                init_all: *library.get(b"ncclCommInitAll\0")?,
                all_reduce: *library.get(b"ncclAllReduce\0")?,
                group_start: *library.get(b"ncclGroupStart\0")?,
                group_end: *library.get(b"ncclGroupEnd\0")?,
                _library: library,
            })
        }
    }
}

fn all_reduce(gpus: &[Context]) -> Result<(), Box<dyn std::error::Error>> {
    let n = gpus.len();
    let comms = Communicator::all(gpus)?;
    let raw = RawNccl::load()?;
    let mut raw_comms = vec![std::ptr::null_mut(); n];
    let devices: Vec<c_int> = (0..n as c_int).collect();
    // SAFETY: writes one communicator per GPU.
    let status = unsafe { (raw.init_all)(raw_comms.as_mut_ptr(), n as c_int, devices.as_ptr()) };
    assert_eq!(status, 0, "ncclCommInitAll");
    let streams: Vec<Stream> = gpus.iter().map(Stream::new).collect::<Result<_, _>>()?;
    println!("\nall-reduce (sum of f32) over {n} GPUs, bus bandwidth bytes * 2(n-1)/n / time:");
    println!(
        "{:>9} {:>10} {:>13} {:>15}",
        "size", "raw GB/s", "memplan GB/s", "memplan/raw"
    );
    let factor = 2.0 * (n - 1) as f64 / n as f64;
    let mut worst = f64::INFINITY;
    for bytes in SIZES {
        let len = bytes / 4;
        let buffers: Vec<DeviceBuffer<f32>> = gpus
            .iter()
            .map(|ctx| DeviceBuffer::zeroed(ctx, len))
            .collect::<Result<_, _>>()?;
        let raw_call = || {
            // SAFETY: each buffer holds `len` floats on its GPU and
            // outlives the sync; the streams are the GPUs'.
            unsafe {
                assert_eq!((raw.group_start)(), 0);
                for ((buffer, comm), stream) in buffers.iter().zip(&raw_comms).zip(&streams) {
                    let address = buffer.device_ptr().as_raw() as *mut c_void;
                    let status =
                        (raw.all_reduce)(address, address, len, 7, 0, *comm, stream.raw().cast());
                    assert_eq!(status, 0, "ncclAllReduce");
                }
                assert_eq!((raw.group_end)(), 0);
            }
            Ok(())
        };
        let ours = || {
            let parts = buffers
                .iter()
                .zip(&comms)
                .zip(&streams)
                .map(|((buffer, comm), stream)| {
                    comm.all_reduce(buffer, buffer, ReduceOp::Sum, stream)
                })
                .collect::<memplan::Result<Vec<_>>>()?;
            // SAFETY: as above.
            unsafe { queue_together(parts) }
        };
        let (raw_s, our_s) = alternate_all(reps(bytes), &streams, raw_call, ours)?;
        let (raw_gb, our_gb) = (
            bytes as f64 * factor / raw_s / 1e9,
            bytes as f64 * factor / our_s / 1e9,
        );
        worst = worst.min(our_gb / raw_gb);
        println!(
            "{:>5} MiB {raw_gb:>10.2} {our_gb:>13.2} {:>15.3}",
            bytes / MIB,
            our_gb / raw_gb
        );
    }
    println!("worst memplan/raw bus bandwidth: {worst:.3}");
    // The raw communicators are left to the process's end: NCCL's
    // destroy is memplan's business only for its own.
    Ok(())
}

fn reps(bytes: usize) -> usize {
    match bytes {
        b if b <= MIB => 200,
        b if b <= 16 * MIB => 60,
        b if b <= 256 * MIB => 20,
        _ => 10,
    }
}

fn alternate(
    reps: usize,
    stream: &Stream,
    raw: impl Fn() -> memplan::Result<()>,
    ours: impl Fn() -> memplan::Result<()>,
) -> memplan::Result<(f64, f64)> {
    alternate_all(reps, std::slice::from_ref(stream), raw, ours)
}

/// Median seconds of `raw` and of `ours`, each followed by a sync of
/// `streams`, taken in turns (which goes first alternating too); the first
/// two of each warm up.
fn alternate_all(
    reps: usize,
    streams: &[Stream],
    raw: impl Fn() -> memplan::Result<()>,
    ours: impl Fn() -> memplan::Result<()>,
) -> memplan::Result<(f64, f64)> {
    let time = |call: &dyn Fn() -> memplan::Result<()>| -> memplan::Result<f64> {
        let start = Instant::now();
        call()?;
        for stream in streams {
            stream.synchronize()?;
        }
        Ok(start.elapsed().as_secs_f64())
    };
    let (mut raw_times, mut our_times) = (Vec::new(), Vec::new());
    for rep in 0..reps + 2 {
        let (r, o) = if rep % 2 == 0 {
            let r = time(&raw)?;
            (r, time(&ours)?)
        } else {
            let o = time(&ours)?;
            (time(&raw)?, o)
        };
        if rep >= 2 {
            raw_times.push(r);
            our_times.push(o);
        }
    }
    Ok((median(&mut raw_times), median(&mut our_times)))
}

/// The context handle the raw call needs: the GPU's primary context,
/// which `Context` retains.
fn raw_context(context: &Context) -> cu::CUcontext {
    let mut raw = std::ptr::null_mut();
    context.bind_to_thread().expect("bind");
    // SAFETY: writes the current context's handle.
    unsafe { cu::cuCtxGetCurrent(&mut raw) };
    raw
}
