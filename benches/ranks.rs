//! All-reduce across processes, one per GPU, as a launcher starts them
//! (`torchrun --nproc-per-node=2 --no-python benches/ranks`, or `mpirun`,
//! `srun` with `NCCL_COMM_ID`): a plan that declares `ranks world` and
//! all-reduces a buffer in place (after filling it, as a plan must write
//! what it reduces), run whole (`plan.run()`), against `cuMemsetD32Async`
//! and `ncclAllReduce` called directly (NCCL loaded by this benchmark itself)
//! on a communicator of its own, joined by the same meeting; alternating,
//! each timed by the host clock around the call and a stream sync. Bus
//! bandwidth as NCCL's tests count it, bytes * 2(n-1)/n over the time;
//! medians; rank 0 prints. Started without a launcher it says how to
//! start it, and exits.

#[path = "../examples/common/mod.rs"]
mod common;

use common::median;
use libloading::Library;
use memplan::nccl::Job;
use memplan::sys as cu;
use memplan::{Context, DeviceBuffer, Fault, Stream, memplan};
use std::ffi::{c_int, c_void};
use std::time::Instant;

const MIB: usize = 1 << 20;
const SIZES: [usize; 4] = [MIB, 16 * MIB, 256 * MIB, 1024 * MIB];

memplan! {
    /// The sum over the job's ranks of each rank's `data`, in place.
    plan Sum(len: usize) {
        ranks  world;
        device data: [f32; len];
        stream s;
        on s {
            fill data with 1.0;
            all_reduce sum data;
        }
    }
}

/// `ncclUniqueId`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawId {
    internal: [u8; 128],
}

/// The raw NCCL calls of the baseline.
struct RawNccl {
    _library: Library,
    init_rank: unsafe extern "C" fn(*mut *mut c_void, c_int, RawId, c_int) -> u32,
    all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        u32,
        u32,
        *mut c_void,
        *mut c_void,
    ) -> u32,
}

impl RawNccl {
    fn load() -> Result<RawNccl, Box<dyn std::error::Error>> {
        let path = std::env::var("MEMPLAN_NCCL").unwrap_or_else(|_| "libnccl.so.2".to_owned());
        // SAFETY: the same library memplan loads; types as in nccl.h.
        unsafe {
            let library = Library::new(&path)?;
            Ok(RawNccl {
                init_rank: *library.get(b"ncclCommInitRank\0")?,
                all_reduce: *library.get(b"ncclAllReduce\0")?,
                _library: library,
            })
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let job = match Job::from_env() {
        Ok(job) => job,
        Err(error) if matches!(error.fault(), Fault::NoLauncher(_)) => {
            println!(
                "ranks: start it under a launcher, one process per GPU: \
                 torchrun --nproc-per-node=2 --no-python benches/ranks"
            );
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    // SAFETY: the first thing `main` does: no other thread runs yet.
    unsafe { job.set_nccl_comm_id()? };
    let ctx = Context::new(job.device()?)?;
    let rank = job.nccl_rank()?;
    let n = rank.count;
    // The baseline's communicator, joined first by the same meeting.
    let raw = RawNccl::load()?;
    ctx.bind_to_thread()?;
    let mut comm = std::ptr::null_mut();
    let id = RawId {
        internal: rank.id.to_bytes(),
    };
    // SAFETY: writes one communicator; the GPU's context is current.
    let status = unsafe { (raw.init_rank)(&mut comm, n as c_int, id, rank.rank as c_int) };
    if status != 0 {
        return Err(format!("ncclCommInitRank: {status}").into());
    }
    let stream = Stream::new(&ctx)?;
    let factor = 2.0 * (n - 1) as f64 / n as f64;
    if rank.rank == 0 {
        println!(
            "all-reduce (sum of f32) over {n} ranks started by {}, one process per GPU,",
            job.launcher
        );
        println!("bus bandwidth bytes * 2(n-1)/n / time, host clock around the call and a sync:");
        println!(
            "{:>9} {:>10} {:>13} {:>15}",
            "size", "raw GB/s", "memplan GB/s", "memplan/raw"
        );
    }
    let mut worst = f64::INFINITY;
    for bytes in SIZES {
        let len = bytes / 4;
        let mut plan = Sum::new(&ctx, &job.nccl_rank()?, len)?;
        let buffer: DeviceBuffer<f32> = DeviceBuffer::zeroed(&ctx, len)?;
        let address = buffer.device_ptr().as_raw() as *mut c_void;
        let raw_call = || -> Result<f64, Box<dyn std::error::Error>> {
            let start = Instant::now();
            // SAFETY: `buffer` holds `len` floats on this GPU and outlives
            // the sync; the stream is this GPU's. The fill is the plan's.
            let status = unsafe {
                let one = 1.0f32.to_bits();
                let filled =
                    cu::cuMemsetD32Async(buffer.device_ptr().as_raw(), one, len, stream.raw());
                if filled != cu::cudaError_enum::CUDA_SUCCESS {
                    return Err(format!("cuMemsetD32Async: {filled:?}").into());
                }
                (raw.all_reduce)(address, address, len, 7, 0, comm, stream.raw().cast())
            };
            if status != 0 {
                return Err(format!("ncclAllReduce: {status}").into());
            }
            stream.synchronize()?;
            Ok(start.elapsed().as_secs_f64())
        };
        let mut ours = || -> Result<f64, Box<dyn std::error::Error>> {
            let start = Instant::now();
            plan.run()?;
            Ok(start.elapsed().as_secs_f64())
        };
        let reps = match bytes {
            b if b <= MIB => 200,
            b if b <= 16 * MIB => 60,
            b if b <= 256 * MIB => 20,
            _ => 10,
        };
        let (mut raw_times, mut our_times) = (Vec::new(), Vec::new());
        // Every rank takes the same turns: a collective waits for all.
        for rep in 0..reps + 2 {
            let (r, o) = if rep % 2 == 0 {
                let r = raw_call()?;
                (r, ours()?)
            } else {
                let o = ours()?;
                (raw_call()?, o)
            };
            if rep >= 2 {
                raw_times.push(r);
                our_times.push(o);
            }
        }
        let (raw_s, our_s) = (median(&mut raw_times), median(&mut our_times));
        let (raw_gb, our_gb) = (
            bytes as f64 * factor / raw_s / 1e9,
            bytes as f64 * factor / our_s / 1e9,
        );
        worst = worst.min(our_gb / raw_gb);
        if rank.rank == 0 {
            println!(
                "{:>5} MiB {raw_gb:>10.2} {our_gb:>13.2} {:>15.3}",
                bytes / MIB,
                our_gb / raw_gb
            );
        }
    }
    if rank.rank == 0 {
        println!("worst memplan/raw bus bandwidth: {worst:.3} (both fill the buffer first)");
    }
    // The raw communicator is left to the process's end: NCCL's destroy
    // is memplan's business only for its own.
    Ok(())
}
