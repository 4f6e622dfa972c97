// Chunked overlap, the central trick of host-device pipelines, as a loop:
// the 64M-float vector add split into chunks, so that one chunk uploads
// while another is added and a third downloads. Two schedules of the same
// loop (round robin over four streams, and a stream for each engine)
// against one stream doing everything in turn; each is checked against
// the CPU.

#[path = "common/mod.rs"]
mod common;
#[path = "common/pipeline.rs"]
mod pipeline;

use memplan::prelude::*;
use pipeline::{OneStream, Pipelined, RoundRobin};

const N: usize = 64 << 20;
const RUNS: usize = 9;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_explain(Pipelined::SUMMARY, Pipelined::DIAGRAM)? else {
        return Ok(());
    };
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..N).map(|i| 1000.0 - (i % 777) as f32).collect();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let bytes = 3.0 * (N * size_of::<f32>()) as f64;
    println!(
        "vector add of {N} floats ({:.0} MiB moved), median of {RUNS} runs:",
        bytes / (1 << 20) as f64
    );

    let mut one = OneStream::new(&ctx, N)?;
    fill(one.host_mut().a, &a);
    fill(one.host_mut().b, &b);
    let one_ms = common::median_ms(RUNS, || one.run())?;
    common::verify("one stream", one.host().c, &expected)?;
    println!("  one stream:                  {one_ms:7.3} ms");
    drop(one);

    // 16 chunks over 4 streams, the classic schedule.
    let (m, k) = (N / 16, 16);
    let mut round_robin = RoundRobin::new(&ctx, N, m, k, 4)?;
    fill(round_robin.host_mut().a, &a);
    fill(round_robin.host_mut().b, &b);
    let round_robin_ms = common::median_ms(RUNS, || round_robin.run())?;
    common::verify("round robin", round_robin.host().c, &expected)?;
    println!(
        "  16 chunks, 4 streams:        {round_robin_ms:7.3} ms, {:.2}x one stream",
        one_ms / round_robin_ms
    );
    round_robin.set_timing(true)?;
    common::save_timeline("pipeline_round_robin", &Timeline::from(round_robin.run()?))?;
    drop(round_robin);

    // 32 chunks, a stream for each engine; the last chunk is shorter. Chunks
    // of whole 4 KiB pages: copies from unaligned host addresses are slower.
    let m = N.div_ceil(31).next_multiple_of(1024);
    let k = N.div_ceil(m);
    let mut pipelined = Pipelined::new(&ctx, N, m, k)?;
    fill(pipelined.host_mut().a, &a);
    fill(pipelined.host_mut().b, &b);
    let pipelined_ms = common::median_ms(RUNS, || pipelined.run())?;
    common::verify("pipelined", pipelined.host().c, &expected)?;
    println!(
        "  {k} chunks, stream per engine: {pipelined_ms:7.3} ms, {:.2}x one stream",
        one_ms / pipelined_ms
    );
    let mut graph = pipelined.graph()?;
    let graph_ms = common::median_ms(RUNS, || graph.run())?;
    drop(graph);
    common::verify("pipelined, graph", pipelined.host().c, &expected)?;
    println!(
        "  the same as a CUDA graph:    {graph_ms:7.3} ms, {:.2}x one stream",
        one_ms / graph_ms
    );
    pipelined.set_timing(true)?;
    common::save_timeline("pipeline_pipelined", &Timeline::from(pipelined.run()?))?;
    Ok(())
}

fn fill(into: &mut [f32], from: &[f32]) {
    into.copy_from_slice(from);
}
