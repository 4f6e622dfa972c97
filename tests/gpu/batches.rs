//! Sizes and values given to each run, and batches in a loop: a plan runs
//! again with a new value and a shorter length without being rebuilt, a
//! length past the capacity is an error naming the op, loops that read a
//! run's size are unrolled for it, two plans submitted in turns give
//! every batch's result, and a bound a plan states of a size (`run len:
//! usize <= cap`) holds at every run that goes ahead, also where chunks
//! clamped by it are empty.

use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::memplan;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "batches::values_and_sizes_change_at_each_run",
        values_and_sizes_change_at_each_run,
    ),
    (
        "batches::a_length_past_the_capacity_fails_at_run",
        a_length_past_the_capacity_fails_at_run,
    ),
    (
        "batches::loops_are_unrolled_for_each_run",
        loops_are_unrolled_for_each_run,
    ),
    (
        "batches::two_plans_in_turns_process_every_batch",
        two_plans_in_turns_process_every_batch,
    ),
    (
        "batches::chunks_end_at_a_bounded_run_length",
        chunks_end_at_a_bounded_run_length,
    ),
    (
        "batches::a_length_above_its_bound_is_refused_before_anything_runs",
        a_length_above_its_bound_is_refused_before_anything_runs,
    ),
    (
        "batches::one_result_per_chunk_of_a_bounded_run",
        one_result_per_chunk_of_a_bounded_run,
    ),
    (
        "batches::chunks_clamped_at_both_ends_are_empty_past_the_run",
        chunks_clamped_at_both_ends_are_empty_past_the_run,
    ),
];

memplan! {
    /// y = 2a * x + y over the first `len` elements; `rounds`, given to
    /// `new`, is an argument beside two that each run gives.
    pub plan Saxpy(cap: usize, rounds: i32, run len: usize, run a: f32) {
        kernel saxpy_rounds(n: i32, a: f32, rounds: i32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device dx: [f32; cap], dy: [f32; cap];
        stream s;
        on s {
            copy x[..len] -> dx[..len];
            copy y[..len] -> dy[..len];
            launch saxpy_rounds<<<blocks(len, 256), 256>>>(len as i32, 2.0 * a, rounds, dx[..len], dy[..len]);
            copy dy[..len] -> y[..len];
        }
    }

    /// y = a * x + y in the first `k` chunks of `m`.
    pub plan Chunks(cap: usize, m: usize, run k: usize, run a: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device dx: [f32; cap], dy: [f32; cap];
        stream lanes[2];
        for c in 0..k {
            on lanes[c % 2] {
                copy x[c * m..min(c * m + m, cap)] -> dx[c * m..min(c * m + m, cap)];
                copy y[c * m..min(c * m + m, cap)] -> dy[c * m..min(c * m + m, cap)];
                launch saxpy<<<blocks(min(c * m + m, cap) - c * m, 256), 256>>>(
                    (min(c * m + m, cap) - c * m) as i32, a,
                    dx[c * m..min(c * m + m, cap)], dy[c * m..min(c * m + m, cap)]);
                copy dy[c * m..min(c * m + m, cap)] -> y[c * m..min(c * m + m, cap)];
            }
        }
    }
}

memplan! {
    /// y = a * x + y over the first `len` elements, in chunks of `m` on a
    /// ring of `s` streams, the last chunk ending at `len`: the bound is
    /// what proves every chunk inside the buffers.
    pub plan Stream(cap: usize, m: usize <= cap, s: usize, run len: usize <= cap, run a: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device dx: [f32; cap], dy: [f32; cap];
        stream lanes[s];
        for c in 0..(len + m - 1) / m {
            on lanes[c % s] {
                copy x[c * m..min(c * m + m, len)] -> dx[c * m..min(c * m + m, len)];
                copy y[c * m..min(c * m + m, len)] -> dy[c * m..min(c * m + m, len)];
                launch saxpy<<<blocks(min(c * m + m, len) - c * m, 256), 256>>>(
                    (min(c * m + m, len) - c * m) as i32, a,
                    dx[c * m..min(c * m + m, len)], dy[c * m..min(c * m + m, len)]);
                copy dy[c * m..min(c * m + m, len)] -> y[c * m..min(c * m + m, len)];
            }
        }
    }
}

memplan! {
    /// The sum of each chunk of `m` of the run's `len` elements, in
    /// `sums[c]`: `(len + m - 1) / m` chunks, at most `(cap + m - 1) / m`.
    pub plan ChunkSums(cap: usize, m: usize, run len: usize <= cap) {
        kernel sum_u32(data: &[u32; n], sum: &mut [u64; 1], n: i32) from memplan_kernels::CHECKS;
        host   input: [u32; cap] pinned, sums: [u64; (cap + m - 1) / m] pinned;
        device work: [u32; cap], slot: [u64; 1];
        stream s;
        for c in 0..(len + m - 1) / m {
            on s {
                copy input[c * m..min(c * m + m, len)] -> work[c * m..min(c * m + m, len)];
                fill slot with 0;
                launch sum_u32<<<1, 256>>>(
                    work[c * m..min(c * m + m, len)], slot, (min(c * m + m, len) - c * m) as i32);
                copy slot -> sums[c..c + 1];
            }
        }
    }
}

memplan! {
    /// y = a * x + y over the first `len` elements, in `k` chunks of `m`
    /// (fixed at `new`) through a ring of two pairs of `m`-element slots:
    /// each chunk is clamped at both ends by `len`, so those past it are
    /// empty.
    pub plan Clamped(cap: usize, m: usize, k: usize, run len: usize <= cap, run a: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device dx[2]: [f32; m], dy[2]: [f32; m];
        stream lanes[2];
        for c in 0..k {
            let chunk = min(c * m, len)..min(c * m + m, len);
            let used = 0..chunk.len();
            on lanes[c % 2] {
                copy x[chunk] -> dx[c % 2][used];
                copy y[chunk] -> dy[c % 2][used];
                launch saxpy<<<blocks(chunk.len(), 256), 256>>>(
                    chunk.len() as i32, a, dx[c % 2][used], dy[c % 2][used]);
                copy dy[c % 2][used] -> y[chunk];
            }
        }
    }
}

pub const CAP: usize = 10_000;

/// y = a * x + y of the first `len`, on the CPU, in one rounding as the
/// GPU's fused multiply-add does.
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32], len: usize) {
    for (y, x) in y[..len].iter_mut().zip(&x[..len]) {
        *y = a.mul_add(*x, *y);
    }
}

fn values_and_sizes_change_at_each_run() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Saxpy::new(&ctx, CAP, 3)?;
    let (x, mut y) = (floats(CAP), floats(CAP));
    plan.host_mut().x.copy_from_slice(&x);
    plan.host_mut().y.copy_from_slice(&y);
    for (len, a) in [
        (CAP, 0.5),
        (CAP, -1.5),
        (CAP - 1234, 0.25),
        (0, 9.0),
        (1, 2.0),
    ] {
        plan.run(len, a)?;
        saxpy(2.0 * a, &x, &mut y, len);
        same(&format!("len {len}, a {a}"), plan.host().y, &y)?;
    }
    Ok(())
}

fn a_length_past_the_capacity_fails_at_run() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Saxpy::new(&ctx, CAP, 3)?;
    let error = plan
        .run(CAP + 1, 1.0)
        .err()
        .ok_or("a batch past the capacity ran")?;
    let message = error.to_string();
    ensure!(
        message.contains("copy x[..len] -> dx[..len]") && message.contains("10001"),
        "message: {message}"
    );
    // The plan runs on after the refused run.
    plan.run(CAP, 1.0)?;
    Ok(())
}

fn loops_are_unrolled_for_each_run() -> Result<(), Failed> {
    let ctx = context()?;
    let m = 1000;
    let mut plan = Chunks::new(&ctx, CAP, m)?;
    let (x, mut y) = (floats(CAP), floats(CAP));
    plan.host_mut().x.copy_from_slice(&x);
    plan.host_mut().y.copy_from_slice(&y);
    plan.set_timing(true)?;
    for (k, a) in [(10, 1.0), (3, -2.0), (0, 5.0), (7, 0.5), (10, 3.0)] {
        let report = plan.run(k, a)?;
        saxpy(a, &x, &mut y, (k * m).min(CAP));
        same(&format!("{k} chunks, a {a}"), plan.host().y, &y)?;
        ensure!(
            report.ops.len() == 4 * k,
            "{} ops timed for {k} chunks",
            report.ops.len()
        );
    }
    Ok(())
}

fn two_plans_in_turns_process_every_batch() -> Result<(), Failed> {
    let ctx = context()?;
    let batch = 4096;
    let total = 10 * batch + 1000; // the last batch is shorter
    let (x, y) = (floats(total), floats(total));
    let mut expected = y.clone();
    let a_of = |k: usize| 0.25 * k as f32;
    let mut plans = [Saxpy::new(&ctx, batch, 2)?, Saxpy::new(&ctx, batch, 2)?];
    let mut out = vec![0.0f32; total];
    let mut reports = 0;
    // The batch each plan has on the GPU: where its result goes.
    let mut on_gpu: [Option<(usize, usize)>; 2] = [None, None];
    for (k, start) in (0..total).step_by(batch).enumerate() {
        let len = batch.min(total - start);
        let plan = &mut plans[k % 2];
        reports += usize::from(plan.wait()?.is_some());
        if let Some((done, done_len)) = on_gpu[k % 2].take() {
            out[done..done + done_len].copy_from_slice(&plan.host().y[..done_len]);
        }
        let host = plan.host_mut();
        host.x[..len].copy_from_slice(&x[start..start + len]);
        host.y[..len].copy_from_slice(&y[start..start + len]);
        plan.submit(len, a_of(k))?;
        on_gpu[k % 2] = Some((start, len));
        saxpy(2.0 * a_of(k), &x[start..], &mut expected[start..], len);
    }
    for (plan, slot) in plans.iter_mut().zip(&mut on_gpu) {
        reports += usize::from(plan.wait()?.is_some());
        if let Some((done, done_len)) = slot.take() {
            out[done..done + done_len].copy_from_slice(&plan.host().y[..done_len]);
        }
    }
    ensure!(reports == 11, "{reports} reports for 11 batches");
    same("every batch", &out, &expected)
}

fn chunks_end_at_a_bounded_run_length() -> Result<(), Failed> {
    let ctx = context()?;
    let m = 1000;
    let mut plan = Stream::new(&ctx, CAP, m, 3)?;
    let (x, mut y) = (floats(CAP), floats(CAP));
    plan.host_mut().x.copy_from_slice(&x);
    plan.host_mut().y.copy_from_slice(&y);
    for (len, a) in [
        (CAP, 0.5),
        (CAP - 1234, -1.5),
        (0, 2.0),
        (1, 0.25),
        (m, 3.0),
        (m + 1, 1.0),
    ] {
        plan.run(len, a)?;
        saxpy(a, &x, &mut y, len);
        same(&format!("len {len}, a {a}"), plan.host().y, &y)?;
    }
    Ok(())
}

fn a_length_above_its_bound_is_refused_before_anything_runs() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Stream::new(&ctx, CAP, 1000, 2)?;
    let (x, y) = (floats(CAP), floats(CAP));
    plan.host_mut().x.copy_from_slice(&x);
    plan.host_mut().y.copy_from_slice(&y);
    let error = plan
        .run(CAP + 1, 1.0)
        .err()
        .ok_or("a run above the bound ran")?;
    let message = error.to_string();
    ensure!(
        message.contains("len <= cap")
            && message.contains("`len` is 10001, above its bound `cap`, 10000"),
        "message: {message}"
    );
    let error = plan
        .submit(usize::MAX, 1.0)
        .err()
        .ok_or("a submit above the bound was queued")?;
    ensure!(error.to_string().contains("len <= cap"), "message: {error}");
    // Nothing ran: the host's buffers are as they were.
    same("after refused runs", plan.host().y, &y)?;
    // The plan runs on after them.
    plan.run(CAP, 1.0)?;
    // A bound on what `new` is given is checked by `new`.
    let refused = Stream::new(&ctx, CAP, CAP + 1, 2)
        .err()
        .ok_or("new took m above cap")?;
    ensure!(
        refused
            .to_string()
            .contains("`m` is 10001, above its bound `cap`, 10000"),
        "message: {refused}"
    );
    Ok(())
}

fn one_result_per_chunk_of_a_bounded_run() -> Result<(), Failed> {
    let ctx = context()?;
    let m = 1000;
    let mut plan = ChunkSums::new(&ctx, CAP, m)?;
    let input: Vec<u32> = (0..CAP as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    plan.host_mut().input.copy_from_slice(&input);
    for len in [CAP, CAP - 1234, 1, m, m + 1, 0] {
        plan.host_mut().sums.fill(u64::MAX);
        plan.run(len)?;
        let chunks = len.div_ceil(m);
        for (c, &sum) in plan.host().sums.iter().enumerate() {
            let expected = match c < chunks {
                true => input[c * m..(c * m + m).min(len)]
                    .iter()
                    .map(|&x| u64::from(x))
                    .sum(),
                // Past the run's chunks: untouched.
                false => u64::MAX,
            };
            ensure!(
                sum == expected,
                "len {len}, chunk {c}: {sum}, expected {expected}"
            );
        }
    }
    Ok(())
}

fn chunks_clamped_at_both_ends_are_empty_past_the_run() -> Result<(), Failed> {
    let ctx = context()?;
    let m = 1000;
    // Enough chunks for the capacity, and more than enough.
    for k in [CAP.div_ceil(m), CAP.div_ceil(m) + 3] {
        let mut plan = Clamped::new(&ctx, CAP, m, k)?;
        let (x, mut y) = (floats(CAP), floats(CAP));
        plan.host_mut().x.copy_from_slice(&x);
        plan.host_mut().y.copy_from_slice(&y);
        for (len, a) in [
            (CAP, 0.5),
            (CAP - 1234, -1.5),
            (0, 2.0),
            (1, 0.25),
            (m, 3.0),
            (m + 1, 1.0),
        ] {
            plan.run(len, a)?;
            saxpy(a, &x, &mut y, len);
            same(&format!("{k} chunks, len {len}, a {a}"), plan.host().y, &y)?;
        }
    }
    Ok(())
}
