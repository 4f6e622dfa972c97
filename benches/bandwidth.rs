//! Host-to-device and device-to-host bandwidth for pageable, pinned and
//! write-combined memory at 1, 16 and 256 MiB: through memplan-runtime's
//! queued copies and through raw `cust::sys` calls on the same stream, in the
//! same run, alternating, so that both see the same machine. Prints the
//! median of each and the ratio of their times (1.000 = no overhead).
//!
//! Run it with `cargo xtask bench`, or `benches/bandwidth` in the gpu-bundle.

#[path = "../examples/common/mod.rs"]
mod common;

use common::median;
use memplan::sys as cu;
use memplan::{DeviceBuffer, HostAlloc, HostMemoryMut, PinnedBuffer, ResultExt, Stream, copy};
use std::time::Instant;

const MIB: usize = 1 << 20;
const SIZES: [usize; 3] = [MIB, 16 * MIB, 256 * MIB];

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    HostToDevice,
    DeviceToHost,
}

fn main() -> Result<(), memplan::Error> {
    let Some(ctx) = common::context_or_skip("bandwidth")? else {
        return Ok(());
    };
    println!(
        "bandwidth on {}: median of alternating runs, host clock around copy + stream sync",
        ctx.device_name()?
    );
    println!(
        "{:>8} {:<15} {:<4} {:>10} {:>13} {:>17}",
        "size", "host memory", "dir", "raw GB/s", "memplan GB/s", "memplan/raw time"
    );
    let stream = Stream::new(&ctx)?;
    let mut worst: f64 = 0.0;
    for bytes in SIZES {
        let device = DeviceBuffer::<u8>::new(&ctx, bytes)?;
        let mut pageable = vec![1u8; bytes];
        let mut pinned = PinnedBuffer::<u8>::new(&ctx, bytes)?;
        let mut write_combined =
            PinnedBuffer::<u8>::with_flags(&ctx, bytes, HostAlloc::WRITE_COMBINED)?;
        pinned.fill(1);
        write_combined.fill(1);
        for direction in [Direction::HostToDevice, Direction::DeviceToHost] {
            let results = [
                (
                    "pageable",
                    measure(&stream, &device, pageable.as_mut_slice(), direction)?,
                ),
                ("pinned", measure(&stream, &device, &mut pinned, direction)?),
                (
                    "write-combined",
                    measure(&stream, &device, &mut write_combined, direction)?,
                ),
            ];
            for (name, (raw, ours)) in results {
                let ratio = ours / raw;
                worst = worst.max(ratio);
                println!(
                    "{:>6}MiB {:<15} {:<4} {:>10.1} {:>13.1} {:>17.3}",
                    bytes / MIB,
                    name,
                    if direction == Direction::HostToDevice {
                        "H2D"
                    } else {
                        "D2H"
                    },
                    bytes as f64 / raw / 1e9,
                    bytes as f64 / ours / 1e9,
                    ratio
                );
            }
        }
    }
    println!("largest memplan/raw time ratio: {worst:.3}");
    Ok(())
}

/// Median seconds per copy: (raw driver call, memplan-runtime). The two
/// alternate, and which goes first alternates too, so that drift and warm
/// caches favour neither.
fn measure<H: HostMemoryMut<u8> + ?Sized>(
    stream: &Stream,
    device: &DeviceBuffer<u8>,
    host: &mut H,
    direction: Direction,
) -> Result<(f64, f64), memplan::Error> {
    let bytes = device.len();
    let reps = if bytes <= MIB {
        200
    } else if bytes <= 16 * MIB {
        60
    } else {
        30
    };
    let (mut raw, mut ours) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for rep in 0..reps + 2 {
        let (raw_time, our_time) = if rep % 2 == 0 {
            let raw_time = time(stream, || raw_copy(stream, device, host, direction))?;
            (
                raw_time,
                time(stream, || memplan_copy(stream, device, host, direction))?,
            )
        } else {
            let our_time = time(stream, || memplan_copy(stream, device, host, direction))?;
            (
                time(stream, || raw_copy(stream, device, host, direction))?,
                our_time,
            )
        };
        // The first two of each are warm-up.
        if rep >= 2 {
            raw.push(raw_time);
            ours.push(our_time);
        }
    }
    Ok((median(&mut raw), median(&mut ours)))
}

/// The copy as `cust::sys` calls it: the baseline.
fn raw_copy<H: HostMemoryMut<u8> + ?Sized>(
    stream: &Stream,
    device: &DeviceBuffer<u8>,
    host: &mut H,
    direction: Direction,
) -> memplan::Result<()> {
    let (pointer, bytes) = host.host_parts_mut();
    let (device_ptr, stream_raw) = (device.device_ptr().as_raw(), stream.raw());
    // SAFETY: both buffers hold `bytes` bytes and outlive the sync in `time`.
    let status = unsafe {
        match direction {
            Direction::HostToDevice => {
                cu::cuMemcpyHtoDAsync_v2(device_ptr, pointer.cast(), bytes, stream_raw)
            }
            Direction::DeviceToHost => {
                cu::cuMemcpyDtoHAsync_v2(pointer.cast(), device_ptr, bytes, stream_raw)
            }
        }
    };
    match status {
        cu::cudaError_enum::CUDA_SUCCESS => Ok(()),
        error => Err(memplan::Fault::Driver(memplan::DriverError(error as u32)))
            .at("raw copy", memplan::Location::caller()),
    }
}

/// The copy through memplan-runtime.
fn memplan_copy<H: HostMemoryMut<u8> + ?Sized>(
    stream: &Stream,
    device: &DeviceBuffer<u8>,
    host: &mut H,
    direction: Direction,
) -> memplan::Result<()> {
    // SAFETY: as in `raw_copy`.
    let queued = unsafe {
        match direction {
            Direction::HostToDevice => copy::htod_async(stream, &*host, .., device, ..),
            Direction::DeviceToHost => copy::dtoh_async(stream, device, .., host, ..),
        }
    };
    queued
        .map(drop)
        .at("memplan copy", memplan::Location::caller())
}

fn time(stream: &Stream, copy: impl FnOnce() -> memplan::Result<()>) -> memplan::Result<f64> {
    let start = Instant::now();
    copy()?;
    stream.synchronize()?;
    Ok(start.elapsed().as_secs_f64())
}
