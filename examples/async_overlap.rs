// Copies overlapped with compute: a vector add of a million floats in two
// halves on two streams. The `upload` stream copies both halves in and
// records an event after each; the `compute` stream waits for a half's
// event, adds it and copies it back, while the other half is still
// uploading. A one-stream plan doing the same work runs first, for the
// comparison.

#[path = "common/mod.rs"]
mod common;

use memplan::prelude::*;

memplan! {
    /// c = a + b on one stream: upload everything, add, download.
    pub plan VectorAddSerial(n: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;

        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream work;

        on work {
            copy a -> da;
            copy b -> db;
            launch vadd<<<blocks(n, 256), 256>>>(da, db, dc, n as i32);
            copy dc -> c;
        }
    }

    /// c = a + b in two halves: the second half uploads while the first is
    /// added and downloaded.
    pub plan VectorAddOverlapped(n: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;

        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream upload, compute;
        event  first_half, second_half;

        on upload {
            copy a[..n / 2] -> da[..n / 2];
            copy b[..n / 2] -> db[..n / 2];
            record first_half;
            copy a[n / 2..] -> da[n / 2..];
            copy b[n / 2..] -> db[n / 2..];
            record second_half;
        }
        on compute {
            wait first_half;
            launch vadd<<<blocks(n / 2, 256), 256>>>(da[..n / 2], db[..n / 2], dc[..n / 2], (n / 2) as i32);
            copy dc[..n / 2] -> c[..n / 2];
            wait second_half;
            launch vadd<<<blocks(n - n / 2, 256), 256>>>(da[n / 2..], db[n / 2..], dc[n / 2..], (n - n / 2) as i32);
            copy dc[n / 2..] -> c[n / 2..];
        }
    }
}

const N: usize = 1 << 20;
const RUNS: usize = 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) =
        common::context_or_explain(VectorAddOverlapped::SUMMARY, VectorAddOverlapped::DIAGRAM)?
    else {
        return Ok(());
    };
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..N).map(|i| 1000.0 - (i % 777) as f32).collect();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();

    let mut serial = VectorAddSerial::new(&ctx, N)?;
    let host = serial.host_mut();
    host.a.copy_from_slice(&a);
    host.b.copy_from_slice(&b);
    let serial_ms = common::median_ms(RUNS, || serial.run())?;
    common::verify("one stream", serial.host().c, &expected)?;

    let mut overlapped = VectorAddOverlapped::new(&ctx, N)?;
    let host = overlapped.host_mut();
    host.a.copy_from_slice(&a);
    host.b.copy_from_slice(&b);
    let overlapped_ms = common::median_ms(RUNS, || overlapped.run())?;
    common::verify("two streams", overlapped.host().c, &expected)?;

    let bytes = 3.0 * (N * size_of::<f32>()) as f64;
    println!(
        "vector add of {N} floats ({:.1} MB moved), median of {RUNS} runs:",
        bytes / 1e6
    );
    println!(
        "  one stream:  {serial_ms:.3} ms ({:.1} GB/s)",
        bytes / serial_ms / 1e6
    );
    println!(
        "  two streams: {overlapped_ms:.3} ms ({:.1} GB/s), {:.2}x",
        bytes / overlapped_ms / 1e6,
        serial_ms / overlapped_ms
    );

    overlapped.set_timing(true)?;
    let report = overlapped.run()?;
    print!("{report}");
    common::save_timeline("async_overlap", &Timeline::from(report))?;
    Ok(())
}
