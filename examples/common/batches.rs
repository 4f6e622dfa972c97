// The batch loop of two plans in turns, shared by the `batches` example
// and `benches/pipeline.rs`: while the GPU runs one plan on batch k, the
// host fills the other with batch k + 1. Each run is given its batch's
// length (the last one is shorter) and scale.

use memplan::memplan;

memplan! {
    /// y = a * x + y over the first `len` of `cap` elements.
    pub plan Saxpy(cap: usize, rounds: i32, run len: usize, run a: f32) {
        kernel saxpy_rounds(n: i32, a: f32, rounds: i32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device dx: [f32; cap], dy: [f32; cap];
        stream s;
        on s {
            copy x[..len] -> dx[..len];
            copy y[..len] -> dy[..len];
            launch saxpy_rounds<<<blocks(len, 256), 256>>>(len as i32, a, rounds, dx[..len], dy[..len]);
            copy dy[..len] -> y[..len];
        }
    }
}

/// Runs every batch of `x` and `y` (of up to the plans' capacity each,
/// batch `k` scaled by `a(k)`) through `plans` in turns, into `out`.
pub fn in_turns(
    plans: &mut [Saxpy; 2],
    x: &[f32],
    y: &[f32],
    a: impl Fn(usize) -> f32,
    out: &mut [f32],
) -> memplan::Result<()> {
    let batch = plans[0].host().x.len();
    let mut pending: [Option<(usize, usize)>; 2] = [None, None];
    for (k, start) in (0..x.len()).step_by(batch).enumerate() {
        let len = batch.min(x.len() - start);
        let (plan, slot) = (&mut plans[k % 2], &mut pending[k % 2]);
        // This plan's batch before last: waits for it, if still running.
        if let Some((done, done_len)) = slot.take() {
            out[done..done + done_len].copy_from_slice(&plan.host().y[..done_len]);
        }
        let host = plan.host_mut();
        host.x[..len].copy_from_slice(&x[start..start + len]);
        host.y[..len].copy_from_slice(&y[start..start + len]);
        plan.submit(len, a(k))?;
        *slot = Some((start, len));
    }
    for (plan, slot) in plans.iter_mut().zip(&mut pending) {
        plan.wait()?;
        if let Some((done, done_len)) = slot.take() {
            out[done..done + done_len].copy_from_slice(&plan.host().y[..done_len]);
        }
    }
    Ok(())
}
