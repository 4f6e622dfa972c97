//! Collectives in timed runs. NCCL makes every part's calls when its group
//! ends, so each part is timed by the work that ran on its own GPU under
//! the group's id; where NCCL may give the GPU nothing to do (an in-place
//! reduction of a rank alone), its record is taken if it comes and never
//! waited for. No speed is asserted (that is `benches/multi_gpu.rs`'s).

use crate::collectives::ONE_AT_A_TIME;
use crate::harness::GpuTest;
use crate::plans::{Joined, N, Reduce, gpus};
use crate::reports::{check_clock, check_stream_order};
use libtest_mimic::Failed;
use memplan::nccl::{Rank, UniqueId};
use memplan::prelude::*;
use memplan::{OpKind, Timing};

/// Tests of one GPU: a job of one rank.
pub const ONE_GPU: &[(&str, GpuTest)] = &[(
    "multi_gpu::timing::a_rank_alone_times_what_its_collectives_gave_the_gpu",
    a_rank_alone_times_what_its_collectives_gave_the_gpu,
)];

/// Tests of several GPUs.
pub const TESTS: &[(&str, GpuTest)] = &[(
    "multi_gpu::timing::each_gpus_part_is_timed_by_its_own_gpus_work",
    each_gpus_part_is_timed_by_its_own_gpus_work,
)];

memplan! {
    /// A sum in place: for a rank alone, NCCL may leave the data as it is.
    plan InPlace(n: usize) {
        ranks  world;
        host   x: [f32; n] pinned, y: [f32; n] pinned;
        device grads: [f32; n];
        stream s;
        on s {
            copy x -> grads;
            all_reduce sum grads;
            copy grads -> y;
        }
    }
}

/// Rank 0 of a job of one.
fn alone() -> memplan::Result<Rank> {
    Ok(Rank {
        id: UniqueId::new()?,
        count: 1,
        rank: 0,
    })
}

fn a_rank_alone_times_what_its_collectives_gave_the_gpu() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new(0)?;
    // Out of place, the average of one rank is its data, moved on the GPU.
    let mut joined = Joined::new(&ctx, &alone()?, N)?;
    joined.host_mut().x.fill(3.0);
    joined.set_timing(true)?;
    for _ in 0..2 {
        let report = joined.run()?;
        check_clock(&report)?;
        check_stream_order(&report, 3)?;
        let part = &report.ops[1];
        ensure!(
            part.op.kind == OpKind::Collective && part.bytes == (N * 4) as u64,
            "the all-reduce's timing: {part:?}\n{report}"
        );
        ensure!(joined.host().y.iter().all(|&v| v == 3.0), "the average");
    }
    // Timed by events, the group is framed on its stream like any op.
    joined.set_timing(Timing::Events)?;
    check_stream_order(&joined.run()?, 3)?;
    // In place, the part may have given the GPU nothing: no record is
    // missed for it (it is not awaited), and the copies are timed.
    let mut in_place = InPlace::new(&ctx, &alone()?, N)?;
    in_place.host_mut().x.fill(5.0);
    in_place.set_timing(true)?;
    let report = in_place.run()?;
    check_clock(&report)?;
    let copies = (report.ops.iter())
        .filter(|t| t.op.kind != OpKind::Collective)
        .count();
    ensure!(copies == 2, "{copies} copies timed:\n{report}");
    check_stream_order(&report, report.ops.len())?;
    ensure!(in_place.host().y.iter().all(|&v| v == 5.0), "the sum");
    Ok(())
}

fn each_gpus_part_is_timed_by_its_own_gpus_work() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = gpus()?;
    let g = gpus.len();
    let mut plan = Reduce::new(&gpus, N, g)?;
    plan.host_mut().x.fill(1.0);
    plan.set_timing(true)?;
    let mut timeline = memplan::Timeline::new();
    for _ in 0..2 {
        let report = plan.run()?;
        check_clock(&report)?;
        check_stream_order(&report, 4 * g)?;
        let parts: Vec<_> = (report.ops.iter())
            .filter(|t| t.op.kind == OpKind::Collective)
            .collect();
        let lanes: Vec<String> = parts.iter().map(|t| t.op.lane()).collect();
        let expected: Vec<String> = (0..g).map(|i| format!("s[{i}]")).collect();
        ensure!(lanes == expected, "the parts' lanes: {lanes:?}\n{report}");
        ensure!(
            parts.iter().all(|t| t.bytes == (N * 4) as u64),
            "the parts' bytes:\n{report}"
        );
        // An all-reduce finishes nowhere before every GPU has begun it:
        // spans that do not meet were taken from the wrong GPU's work.
        let latest_start = parts.iter().map(|t| t.start_ms).fold(0.0, f64::max);
        let earliest_end = parts.iter().map(|t| t.end_ms).fold(f64::MAX, f64::min);
        ensure!(
            // 10 us of slack: CUPTI maps each GPU's clock to the host's.
            latest_start <= earliest_end + 1e-2,
            "the parts do not overlap ({latest_start:.4} ms > {earliest_end:.4} ms):\n{report}"
        );
        ensure!(
            plan.host().y.iter().all(|&v| v == 2.0 * g as f32),
            "the sums"
        );
        timeline.add(report);
    }
    let svg = timeline.to_svg();
    ensure!(svg.contains(">collectives<"), "no lane of collectives");
    Ok(())
}
