//! Plans on several GPUs (`gpus gpu[g]`): a shard on each, work passed from
//! GPU to GPU with a copy between their memories and an event waited for
//! across them, stream-ordered memory on the second GPU, a kernel reaching
//! another GPU's memory with `peer`, the errors of `new`, and all of these
//! replayed as CUDA graphs that hold every GPU's work.
//!
//! Each check takes the contexts to run on. The single-GPU suite runs them
//! on GPU 0's context given twice, which exercises the plans' bookkeeping
//! of GPUs but not a second context or the hardware between GPUs;
//! `tests/multi_gpu` runs them on every GPU.

use crate::harness::GpuTest;
use libtest_mimic::Failed;
use memplan::{Context, Fault, Replay, Replayed, Timing, memplan};

/// A check, run on the contexts given.
pub type Check = fn(&[Context]) -> Result<(), Failed>;

/// The checks, by name.
pub const CHECKS: &[(&str, Check)] = &[
    ("a_shard_on_each_gpu", a_shard_on_each_gpu),
    ("work_passes_from_gpu_to_gpu", work_passes_from_gpu_to_gpu),
    (
        "a_kernel_reaches_another_gpus_memory_with_peer",
        a_kernel_reaches_another_gpus_memory_with_peer,
    ),
    (
        "new_checks_the_gpus_it_is_given",
        new_checks_the_gpus_it_is_given,
    ),
    (
        "timing_a_plan_on_several_gpus",
        timing_a_plan_on_several_gpus,
    ),
    (
        "new_refuses_more_than_it_can_number",
        new_refuses_more_than_it_can_number,
    ),
    (
        "plans_on_several_gpus_replay_as_graphs",
        plans_on_several_gpus_replay_as_graphs,
    ),
];

/// The single-GPU suite's: each check on two contexts of GPU 0.
pub const TESTS: &[(&str, GpuTest)] = &[
    ("placed::a_shard_on_each_gpu", || twice_gpu_0(0)),
    ("placed::work_passes_from_gpu_to_gpu", || twice_gpu_0(1)),
    (
        "placed::a_kernel_reaches_another_gpus_memory_with_peer",
        || twice_gpu_0(2),
    ),
    ("placed::new_checks_the_gpus_it_is_given", || twice_gpu_0(3)),
    ("placed::timing_a_plan_on_several_gpus", || twice_gpu_0(4)),
    ("placed::new_refuses_more_than_it_can_number", || {
        twice_gpu_0(5)
    }),
    ("placed::plans_on_several_gpus_replay_as_graphs", || {
        twice_gpu_0(6)
    }),
];

fn twice_gpu_0(check: usize) -> Result<(), Failed> {
    let context = Context::new(0)?;
    (CHECKS[check].1)(&[context.clone(), context])
}

memplan! {
    /// `x * 2` in `g` shards of `n`, shard `i` on GPU `i`.
    plan Spread(n: usize, g: usize) {
        gpus   gpu[g];
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
        host   x: [f32; n * g] pinned, y: [f32; n * g] pinned;
        device part[g]: [f32; n] on gpu, doubled[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                copy x[i * n..i * n + n] -> part[i];
                launch scale_by_two<<<blocks(n, 256), 256>>>(part[i], doubled[i], n as i32);
                copy doubled[i] -> y[i * n..i * n + n];
            }
        }
    }

    /// `x + 2`: one added on GPU 0, copied to GPU 1's memory, one added
    /// there in stream-ordered memory.
    plan Relay(n: usize) {
        gpus   gpu[2];
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   x: [f32; n] pinned, y: [f32; n] pinned;
        device a: [f32; n] on gpu[0], b: [f32; n] on gpu[1];
        stream first on gpu[0], second on gpu[1];
        event  passed;
        on first {
            copy x -> a;
            launch process_data<<<blocks(n, 256), 256>>>(a, n as i32);
            copy a -> b;
            record passed;
        }
        on second {
            wait passed;
            alloc t: [f32; n];
            copy b -> t;
            launch process_data<<<blocks(n, 256), 256>>>(t, n as i32);
            copy t -> y;
            free t;
        }
    }

    /// `c = a + b` by a kernel on GPU 1, `a` in GPU 0's memory.
    plan Reach(n: usize) {
        gpus   gpu[2];
        peer   gpu;
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n] on gpu[0], db: [f32; n] on gpu[1], dc: [f32; n] on gpu[1];
        stream zero on gpu[0], one on gpu[1];
        event  uploaded;
        on zero { copy a -> da; record uploaded; }
        on one {
            copy b -> db;
            wait uploaded;
            launch vadd<<<blocks(n, 256), 256>>>(da, db, dc, n as i32);
            copy dc -> c;
        }
    }

    /// `m` events, each made on every one of `g` GPUs.
    plan Marks(n: usize, m: usize, g: usize) {
        gpus   gpu[g];
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[0];
        stream s on gpu[0], t on gpu[0];
        event  e[m];
        on s { copy x -> d; }
        for c in 0..2 {
            on s { record e[c % m]; }
            on t { wait e[c % m]; }
        }
        on t { copy d -> x; }
    }

    /// Two kernels, each loaded on every one of `g` GPUs.
    plan Kernels(n: usize, g: usize) {
        gpus   gpu[g];
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[0], e: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s {
            copy x -> d;
            launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
            launch scale_by_two<<<blocks(n, 256), 256>>>(d, e, n as i32);
            copy e -> x;
        }
    }

    /// `y = a * (x + 1) + y` over the first `len` elements: one added on
    /// GPU 0, the sum copied to GPU 1's memory on GPU 1's stream, and the
    /// rest done there; each run gives the length and `a`. Its first
    /// stream is GPU 1's, where a graph of it is launched.
    plan Passed(cap: usize, run len: usize, run a: f32) {
        gpus   gpu[2];
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device sum: [f32; cap] on gpu[0], x1: [f32; cap] on gpu[1], y1: [f32; cap] on gpu[1];
        stream second on gpu[1], first on gpu[0];
        event  added;
        on first {
            copy x[..len] -> sum[..len];
            launch process_data<<<blocks(len, 256), 256>>>(sum[..len], len as i32);
            record added;
        }
        on second {
            copy y[..len] -> y1[..len];
            wait added;
            copy sum[..len] -> x1[..len];
            launch saxpy<<<blocks(len, 256), 256>>>(len as i32, a, x1[..len], y1[..len]);
            copy y1[..len] -> y[..len];
        }
    }

    /// A stream on GPU `k`.
    plan OnGpu(n: usize, g: usize, k: usize) {
        gpus   gpu[g];
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[k];
        stream s on gpu[k];
        on s { copy x -> d; copy d -> x; }
    }
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 1021) as f32 - 500.0).collect()
}

fn a_shard_on_each_gpu(gpus: &[Context]) -> Result<(), Failed> {
    let n = 1 << 16;
    let mut plan = Spread::new(gpus, n, gpus.len())?;
    let x = input(n * gpus.len());
    plan.host_mut().x.copy_from_slice(&x);
    plan.run()?;
    let y = &plan.host().y;
    let wrong = (0..x.len()).find(|&i| y[i] != 2.0 * x[i]);
    ensure!(
        wrong.is_none(),
        "element {:?} of y is not twice x's",
        wrong.map(|i| (i, x[i], y[i]))
    );
    Ok(())
}

fn work_passes_from_gpu_to_gpu(gpus: &[Context]) -> Result<(), Failed> {
    let n = 1 << 18;
    let mut plan = Relay::new(&gpus[..2], n)?;
    let x = input(n);
    plan.host_mut().x.copy_from_slice(&x);
    // Twice: the second run reuses the events and the pools of the first.
    for _ in 0..2 {
        plan.run()?;
        let y = &plan.host().y;
        let wrong = (0..n).find(|&i| y[i] != x[i] + 2.0);
        ensure!(wrong.is_none(), "y[{:?}] is not x + 2", wrong);
    }
    Ok(())
}

fn a_kernel_reaches_another_gpus_memory_with_peer(gpus: &[Context]) -> Result<(), Failed> {
    let n = 100_003;
    let Some(mut plan) = reach_where_peers(gpus, n)? else {
        return Ok(());
    };
    let b: Vec<f32> = input(n).iter().map(|v| v * 3.0).collect();
    adds(&mut plan, &input(n), &b, "Reach")
}

/// `Reach` on the first two of `gpus`; `None` where they cannot reach each
/// other, once `new` said so at `peer`.
fn reach_where_peers(gpus: &[Context], n: usize) -> Result<Option<Reach>, Failed> {
    match Reach::new(&gpus[..2], n) {
        Err(e)
            if matches!(e.fault(), Fault::Unsupported(_))
                && gpus[0].ordinal() != gpus[1].ordinal() =>
        {
            ensure!(
                e.to_string().contains("peer gpu"),
                "the error does not name `peer gpu`: {e}"
            );
            Ok(None)
        }
        made => Ok(Some(made?)),
    }
}

/// Runs `plan` on `a` and `b`, and checks that `c` is their sum.
fn adds(plan: &mut Reach, a: &[f32], b: &[f32], what: &str) -> Result<(), Failed> {
    let host = plan.host_mut();
    host.a.copy_from_slice(a);
    host.b.copy_from_slice(b);
    plan.run()?;
    let c = &plan.host().c;
    let wrong = (0..a.len()).find(|&i| c[i] != a[i] + b[i]);
    ensure!(wrong.is_none(), "{what}: c[{wrong:?}] is not a + b");
    Ok(())
}

fn new_checks_the_gpus_it_is_given(gpus: &[Context]) -> Result<(), Failed> {
    // Fewer contexts than the plan declares GPUs.
    let error = match Spread::new(&gpus[..1], 256, 2) {
        Ok(_) => return Err("a plan on 2 GPUs was made with one context".into()),
        Err(error) => error,
    };
    ensure!(
        matches!(
            error.fault(),
            Fault::GpuCount {
                declared: 2,
                given: 1
            }
        ),
        "wrong error: {error}"
    );
    ensure!(
        error.to_string().contains("gpus gpu[g]"),
        "the error does not name the declaration: {error}"
    );
    // No GPU at all, given its count of 0 (or contexts to spare): named.
    for given in [&[][..], gpus] {
        let error = match Spread::new(given, 256, 0) {
            Ok(_) => return Err("a plan on no GPU was made".into()),
            Err(error) => error,
        };
        ensure!(
            matches!(error.fault(), Fault::NoGpus { .. })
                && error.to_string().contains("gpus gpu[g]"),
            "wrong error: {error}"
        );
    }
    // A stream placed past the GPUs given.
    let error = match OnGpu::new(gpus, 256, gpus.len(), gpus.len()) {
        Ok(_) => return Err("a stream was placed on a GPU the plan was not given".into()),
        Err(error) => error,
    };
    ensure!(
        matches!(error.fault(), Fault::NoSuchGpu { .. }),
        "wrong error: {error}"
    );
    // And on the last one, it runs.
    let mut plan = OnGpu::new(gpus, 256, gpus.len(), gpus.len() - 1)?;
    plan.host_mut().x.fill(7.0);
    plan.run()?;
    ensure!(
        plan.host().x.iter().all(|&v| v == 7.0),
        "the round trip changed x"
    );
    Ok(())
}

/// Steps name GPUs, and each GPU's copy of an event or a kernel, with
/// `u16`s: `new` refuses a plan with more, at the declaration that overflows,
/// rather than wrapping. Many contexts of one GPU stand in for many GPUs.
fn new_refuses_more_than_it_can_number(gpus: &[Context]) -> Result<(), Failed> {
    let refused = |made: Result<(), memplan::Error>, at: &str, what: &str| {
        let error = match made {
            Ok(()) => {
                return Err(Failed::from(format!(
                    "a plan with too many {what} was made"
                )));
            }
            Err(error) => error,
        };
        ensure!(
            matches!(error.fault(), Fault::Unsupported(_))
                && error.to_string().contains(at)
                && error.to_string().contains("65535"),
            "wrong error for too many {what}: {error}"
        );
        Ok(())
    };
    let one = &gpus[..1];
    // 40000 events on 2 GPUs are 80000 copies.
    let two = [one[0].clone(), one[0].clone()];
    refused(
        Marks::new(&two, 4, 40_000, 2).map(drop),
        "event e",
        "events",
    )?;
    // 2 kernels on 32768 GPUs are 65536 copies.
    let many = vec![one[0].clone(); 32_768];
    refused(
        Kernels::new(&many, 4, many.len()).map(drop),
        "kernel scale_by_two",
        "kernels",
    )?;
    // 65536 GPUs.
    let more = vec![one[0].clone(); 65_536];
    refused(
        OnGpu::new(&more, 4, more.len(), 0).map(drop),
        "gpus gpu[g]",
        "GPUs",
    )?;
    // Below each limit, both plans are made and run.
    let mut marks = Marks::new(&two, 4, 20_000, 2)?;
    marks.run()?;
    let mut kernels = Kernels::new(&two, 4, 2)?;
    kernels.host_mut().x.fill(1.0);
    kernels.run()?;
    ensure!(
        kernels.host().x.iter().all(|&v| v == 4.0),
        "(1 + 1) * 2 is not 4: {:?}",
        kernels.host().x
    );
    Ok(())
}

fn timing_a_plan_on_several_gpus(gpus: &[Context]) -> Result<(), Failed> {
    let mut plan = Relay::new(&gpus[..2], 4096)?;
    // Events time one GPU's streams only.
    let error = match plan.set_timing(Timing::Events) {
        Ok(()) => return Err("events timed a plan on several GPUs".into()),
        Err(error) => error,
    };
    ensure!(
        error.to_string().contains("CUPTI"),
        "the error does not say why: {error}"
    );
    if std::env::var_os("MEMPLAN_REQUIRE_CUPTI").is_none() {
        return Ok(());
    }
    plan.set_timing(true)?;
    let report = plan.run()?;
    // Every copy and launch of both GPUs: 3 + 3 (the copy into `t`
    // included), each once.
    let timed = report.ops.len();
    ensure!(
        timed == 6 && matches!(report.clock, memplan::Clock::Engine { .. }),
        "{timed} of 6 ops timed, by {:?}:\n{report}",
        report.clock
    );
    Ok(())
}

/// Every plan above that a graph can hold replays as one, each GPU's work
/// in it: graphs of a run (`graph`) and runs replayed (`Replay::Graph`),
/// with lengths and values that change the copy between the GPUs and the
/// kernels on each in place, shapes that change (an empty run, one
/// element) and change back, against the CPU's arithmetic.
fn plans_on_several_gpus_replay_as_graphs(gpus: &[Context]) -> Result<(), Failed> {
    let gpus = &gpus[..2];
    // A shard on each GPU, as one graph replayed twice.
    let n = 1 << 14;
    let mut spread = Spread::new(gpus, n, 2)?;
    let x = input(2 * n);
    let mut graph = spread.graph()?;
    for round in 0..2 {
        let shifted: Vec<f32> = x.iter().map(|v| v + round as f32).collect();
        graph.host_mut().x.copy_from_slice(&shifted);
        graph.run()?;
        let y = &graph.host().y;
        let wrong = (0..2 * n).find(|&i| y[i] != 2.0 * shifted[i]);
        ensure!(
            wrong.is_none(),
            "Spread's graph, round {round}: y[{wrong:?}] is not 2x"
        );
    }
    // Stream-ordered memory on GPU 1, an event across GPUs: runs replayed.
    let n = 1 << 12;
    let mut relay = Relay::new(gpus, n)?;
    relay.set_replay(Replay::Graph)?;
    let x = input(n);
    for round in 0..3 {
        let shifted: Vec<f32> = x.iter().map(|v| v * round as f32).collect();
        relay.host_mut().x.copy_from_slice(&shifted);
        relay.run()?;
        let y = &relay.host().y;
        let wrong = (0..n).find(|&i| y[i] != shifted[i] + 2.0);
        ensure!(
            wrong.is_none(),
            "Relay replayed, round {round}: y[{wrong:?}] is not x + 2"
        );
    }
    // Lengths and values each run gives: the copy between the GPUs, the
    // kernels and the copies on each change in place, or are captured
    // again for a new shape, and come back to shapes already kept. Before
    // `Reach` below turns peer access on: run alone, the copy between GPUs
    // is staged by the driver (other tests of the process may have turned
    // it on first).
    let cap = 5000;
    let mut passed = Passed::new(gpus, cap)?;
    passed.set_replay(Replay::Graph)?;
    let captured = Some(Replayed::Captured);
    // Every node (the three copies and the launch of GPU 1, the copy and
    // the launch of GPU 0) where the length changes; the launch of `a`
    // alone where only `a` does.
    let changed = |nodes| Some(Replayed::Changed { nodes });
    let runs = [
        (cap, 2.0, captured),
        (cap / 2 + 3, -1.5, changed(6)),
        (cap / 2 + 3, 4.0, changed(1)),
        (cap / 2 + 3, 4.0, changed(0)),
        (0, 1.0, captured),
        (1, 3.0, changed(6)),
        (cap, 0.5, changed(6)),
        (cap / 2 + 3, 2.0, changed(6)),
    ];
    for (run, &(len, a, how)) in runs.iter().enumerate() {
        // New at each run, so that a copy left as an earlier run had it
        // (stale addresses or length) shows in `y`.
        let x: Vec<f32> = input(cap).iter().map(|v| v + 7.0 * run as f32).collect();
        let y: Vec<f32> = (0..cap).map(|i| (i % 7) as f32 + run as f32).collect();
        let host = passed.host_mut();
        host.x.copy_from_slice(&x);
        host.y.copy_from_slice(&y);
        let report = passed.run(len, a)?;
        ensure!(
            report.replayed == how,
            "Passed replayed, run {run} (len {len}, a {a}): {:?}, expected {how:?}",
            report.replayed
        );
        let got = &passed.host().y;
        let expected = |i: usize| {
            if i < len {
                a * (x[i] + 1.0) + y[i]
            } else {
                y[i]
            }
        };
        let wrong = (0..cap).find(|&i| got[i] != expected(i));
        ensure!(
            wrong.is_none(),
            "Passed replayed, run {run} (len {len}, a {a}): y{:?}, expected {:?}",
            wrong.map(|i| (i, got[i])),
            wrong.map(expected)
        );
    }
    // A graph of one run, replayed as it is: `y` gains `a * (x + 1)` twice.
    let (len, a) = (cap - 1, 3.0);
    let mut passed = Passed::new(gpus, cap)?;
    let x = input(cap);
    let host = passed.host_mut();
    host.x.copy_from_slice(&x);
    host.y.fill(1.0);
    let mut graph = passed.graph(len, a)?;
    graph.run()?;
    graph.run()?;
    let got = &graph.host().y;
    let expected = |i: usize| {
        if i < len {
            1.0 + 2.0 * (a * (x[i] + 1.0))
        } else {
            1.0
        }
    };
    let wrong = (0..cap).find(|&i| got[i] != expected(i));
    ensure!(
        wrong.is_none(),
        "Passed's graph: y[{wrong:?}] is not 1 + 2a(x + 1)"
    );
    // A kernel on GPU 1 reading GPU 0's memory, where the two can reach
    // each other.
    if let Some(mut reach) = reach_where_peers(gpus, n)? {
        reach.set_replay(Replay::Graph)?;
        for round in 0..2 {
            let what = format!("Reach replayed, round {round}");
            adds(&mut reach, &input(n), &vec![round as f32; n], &what)?;
        }
    }
    Ok(())
}
