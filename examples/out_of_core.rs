// Input far larger than the device memory used: 8 GiB of floats stream
// through a ring of four 64 MiB device buffers (256 MiB in all), each
// chunk uploaded, processed (plus one) and downloaded into its place. An
// upload into a ring buffer waits until the download of the chunk before
// it there is done; a kernel waits for its upload. The copy bound for the
// same bytes, 8 GiB up while 8 GiB go down, is measured in the same run.
//
// `OUT_OF_CORE_GIB` sets the size (8 by default).

#[path = "common/mod.rs"]
mod common;

use common::median;

use memplan::prelude::*;

memplan! {
    /// output = input + 1, in chunks of `m` through a ring of `r` buffers.
    pub plan OutOfCore(n: usize, m: usize, k: usize, r: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; n] pinned, output: [f32; n] pinned;
        device ring[r]: [f32; m];
        stream up, lanes[r];
        event  loaded[r], freed[r];
        for c in 0..k {
            let chunk = c * m..min(c * m + m, n);
            let used = 0..chunk.len();
            on up {
                wait freed[c % r]; // until the ring buffer's previous chunk is downloaded
                copy input[chunk] -> ring[c % r][used];
                record loaded[c % r];
            }
            on lanes[c % r] {
                wait loaded[c % r];
                launch process_data<<<blocks(chunk.len(), 256), 256>>>(ring[c % r][used], chunk.len() as i32);
                copy ring[c % r][used] -> output[chunk];
                record freed[c % r];
            }
        }
    }

    /// The copy bound: all of `up_from` up while all of `down_from` goes
    /// down, on two streams at once.
    pub plan CopyBound(n: usize) {
        host   up_from: [f32; n] pinned, down_to: [f32; n] pinned;
        device up_to: [f32; n], down_from: [f32; n];
        stream up, down;
        fill down_from with 0.0;
        on up   { copy up_from -> up_to; }
        on down { copy down_from -> down_to; }
    }
}

const RING: usize = 4;
const CHUNK: usize = 16 << 20; // floats: 64 MiB
const RUNS: usize = 3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_explain(OutOfCore::SUMMARY, OutOfCore::DIAGRAM)? else {
        return Ok(());
    };
    let gib: usize = std::env::var("OUT_OF_CORE_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let n = gib << 28; // floats
    let k = n.div_ceil(CHUNK);
    let mut plan = OutOfCore::new(&ctx, n, CHUNK, k, RING)?;
    for (i, x) in plan.host_mut().input.iter_mut().enumerate() {
        *x = (i % 4099) as f32;
    }
    let mut bound = CopyBound::new(&ctx, n)?;
    bound.set_timing(true)?;

    // Alternating, so that neither gets a warmer machine.
    let (mut ring_ms, mut bound_ms) = (Vec::new(), Vec::new());
    plan.run()?;
    for _ in 0..RUNS {
        ring_ms.push(plan.run()?.wall.as_secs_f64() * 1e3);
        // The two copies' span, from the first one's start to the last
        // one's end: the fill before them is not part of the bound.
        let report = bound.run()?;
        let copies: Vec<_> = report
            .ops
            .iter()
            .filter(|op| op.bytes > 0 && op.op.stream.is_some())
            .collect();
        let start = copies
            .iter()
            .map(|op| op.start_ms)
            .fold(f64::INFINITY, f64::min);
        let end = copies.iter().map(|op| op.end_ms).fold(0.0, f64::max);
        bound_ms.push(end - start);
    }
    let (ring, bound) = (median(&mut ring_ms), median(&mut bound_ms));

    common::verify_each("out of core", plan.host().output, |i| {
        (i % 4099) as f32 + 1.0
    })?;
    let bytes = (n * size_of::<f32>()) as f64;
    let device_mib = (RING * CHUNK * size_of::<f32>()) >> 20;
    println!(
        "{gib} GiB in and {gib} GiB out through {device_mib} MiB of device memory ({k} chunks, ring of {RING}), median of {RUNS} runs:"
    );
    println!(
        "  ring:        {ring:8.1} ms, {:.1} GB/s each way",
        bytes / ring / 1e6
    );
    println!(
        "  copy bound:  {bound:8.1} ms, {:.1} GB/s each way",
        bytes / bound / 1e6
    );
    println!(
        "  ring / bound: {:.3}x the bound's time ({:.3} of its speed)",
        ring / bound,
        bound / ring
    );
    plan.set_timing(true)?;
    common::save_timeline("out_of_core", &Timeline::from(plan.run()?))?;
    Ok(())
}
