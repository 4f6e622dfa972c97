//! Runs replayed as CUDA graphs (`set_replay(Replay::Graph)`): over many
//! runs whose sizes and values change (short last chunks, empty runs, loop
//! counts that change and change back, more shapes than graphs kept), a
//! replayed plan gives what the same plan run directly gives; a run its
//! checks refuse touches no graph; plans a graph cannot hold are refused.

use crate::batches::{CAP, ChunkSums, Clamped, Saxpy, Stream, saxpy};
use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::{GRAPHS_KEPT, Replay, Replayed, memplan};

/// The plan `$new` makes, replayed as `$replay` says, given `x` and `y`.
macro_rules! given {
    ($new:expr, $replay:expr, $x:expr, $y:expr) => {{
        let mut plan = $new;
        plan.set_replay($replay)?;
        plan.host_mut().x.copy_from_slice($x);
        plan.host_mut().y.copy_from_slice($y);
        plan
    }};
}

/// Two of the plan `$new` makes, the second replayed from graphs, both
/// given `x` and `y`.
macro_rules! direct_and_replayed {
    ($new:expr, $x:expr, $y:expr) => {
        [
            given!($new, Replay::Direct, $x, $y),
            given!($new, Replay::Graph, $x, $y),
        ]
    };
}

/// Both plans' `y` is `expected`.
macro_rules! both_match {
    ($plans:expr, $what:expr, $expected:expr) => {{
        let what = $what;
        same(
            &format!("{what}, run directly"),
            $plans[0].host().y,
            $expected,
        )?;
        same(&format!("{what}, replayed"), $plans[1].host().y, $expected)?;
    }};
}

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "replay::replayed_runs_match_direct_runs",
        replayed_runs_match_direct_runs,
    ),
    (
        "replay::more_shapes_than_graphs_kept",
        more_shapes_than_graphs_kept,
    ),
    (
        "replay::values_in_fills_and_stream_ordered_memory",
        values_in_fills_and_stream_ordered_memory,
    ),
    (
        "replay::a_refused_run_touches_no_graph",
        a_refused_run_touches_no_graph,
    ),
    (
        "replay::plans_a_graph_cannot_hold_are_refused",
        plans_a_graph_cannot_hold_are_refused,
    ),
    (
        "replay::a_node_grown_or_changed_back_is_right",
        a_node_grown_or_changed_back_is_right,
    ),
    (
        "replay::a_replay_in_flight_is_waited_for",
        a_replay_in_flight_is_waited_for,
    ),
    (
        "replay::a_failed_capture_leaves_the_plan_usable",
        a_failed_capture_leaves_the_plan_usable,
    ),
    (
        "replay::values_change_while_sizes_stay",
        values_change_while_sizes_stay,
    ),
    (
        "replay::a_graph_of_one_run_replays_its_sizes_and_values",
        a_graph_of_one_run_replays_its_sizes_and_values,
    ),
    (
        "replay::runs_of_one_shape_change_their_graph_in_place",
        runs_of_one_shape_change_their_graph_in_place,
    ),
    (
        "replay::a_value_changes_only_the_launches_that_read_it",
        a_value_changes_only_the_launches_that_read_it,
    ),
];

memplan! {
    /// `v + 1` in the first `len` elements, through stream-ordered
    /// memory: a fill of a value each run gives, a launch and a copy whose
    /// lengths each run gives, all on memory the graph allocates.
    pub plan FillThenAddOne(cap: usize, run len: usize <= cap, run v: f32) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   out: [f32; cap] pinned;
        stream s;
        on s {
            alloc tmp: [f32; cap];
            fill tmp[..len] with v;
            launch process_data<<<blocks(len, 256), 256>>>(tmp[..len], len as i32);
            copy tmp[..len] -> out[..len];
            free tmp;
        }
    }

    /// A stream-ordered buffer of `huge` elements, which the GPU cannot
    /// have, beside one it can.
    pub plan TooBig(cap: usize, huge: usize, run v: f32) {
        host   out: [f32; cap] pinned;
        stream s;
        on s {
            alloc keep: [f32; cap];
            alloc big: [f32; huge];
            fill big with 0.0;
            fill keep with v;
            copy keep -> out;
            free big;
            free keep;
        }
    }

    /// Adds one to the first `m` elements, `m` given to each run: an
    /// extent measured from a value, checked at each run.
    pub plan Counted(cap: usize, run m: i32) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   out: [f32; cap] pinned;
        device d: [f32; cap];
        stream s;
        on s {
            fill d with 0.0;
            launch process_data<<<blocks(cap, 256), 256>>>(d, m);
            copy d -> out;
        }
    }

    /// `k` times y = a * x + y, then z = b * x + z: two values each run
    /// gives, each read by launches of their own.
    pub plan TwoValues(cap: usize, k: usize, run a: f32, run b: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned, z: [f32; cap] pinned;
        device dx: [f32; cap], dy: [f32; cap], dz: [f32; cap];
        stream s;
        on s {
            copy x -> dx;
            copy y -> dy;
            copy z -> dz;
        }
        for i in 0..k {
            on s {
                launch saxpy<<<blocks(cap, 256), 256>>>(cap as i32, a, dx, dy);
                launch saxpy<<<blocks(cap, 256), 256>>>(cap as i32, b, dx, dz);
            }
        }
        on s {
            copy dy -> y;
            copy dz -> z;
        }
    }

    /// A synchronous copy, which a graph cannot hold.
    pub plan Synchronous(n: usize, run v: f32) {
        host   x: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        fill d with v;
        copy d -> x;
        on s {
            copy x -> d;
        }
    }
}

/// `FillThenAddOne`, replayed as `replay` says, its `out` all -7, and
/// what `out` holds.
fn fill_then_add_one(
    ctx: &memplan::Context,
    replay: Replay,
) -> Result<(FillThenAddOne, Vec<f32>), Failed> {
    let mut plan = FillThenAddOne::new(ctx, CAP)?;
    plan.set_replay(replay)?;
    let out = vec![-7.0f32; CAP];
    plan.host_mut().out.copy_from_slice(&out);
    Ok((plan, out))
}

/// The lengths a batch loop gives: whole, short, empty, one element, a
/// chunk and one more, and back to whole (graphs kept are replayed).
const LENGTHS: [usize; 9] = [CAP, CAP - 1234, 0, 1, 1000, 1001, CAP, CAP - 1234, CAP];

fn a_of(run: usize) -> f32 {
    0.25 * run as f32 - 1.0
}

fn replayed_runs_match_direct_runs() -> Result<(), Failed> {
    let ctx = context()?;
    let (x, y) = (floats(CAP), floats(CAP));

    let mut plans = direct_and_replayed!(Saxpy::new(&ctx, CAP, 2)?, &x, &y);
    let mut expected = y.clone();
    for (run, len) in LENGTHS.into_iter().enumerate() {
        for plan in &mut plans {
            plan.run(len, a_of(run))?;
        }
        saxpy(2.0 * a_of(run), &x, &mut expected, len);
        both_match!(plans, format!("Saxpy, run {run}, len {len}"), &expected);
    }
    // The same run again and again: a graph left as it is still runs.
    for again in 0..3 {
        for plan in &mut plans {
            plan.run(CAP - 1, 0.75)?;
        }
        saxpy(1.5, &x, &mut expected, CAP - 1);
        both_match!(plans, format!("Saxpy, the same run {again}"), &expected);
    }

    // Chunks of a ring of streams, as many as the run's length needs.
    let mut plans = direct_and_replayed!(Stream::new(&ctx, CAP, 1000, 3)?, &x, &y);
    let mut expected = y.clone();
    for (run, len) in LENGTHS.into_iter().enumerate() {
        // Queued and waited for as a batch loop does.
        for plan in &mut plans {
            plan.submit(len, a_of(run))?;
        }
        for plan in &mut plans {
            plan.wait()?.ok_or("no run in flight after submit")?;
        }
        saxpy(a_of(run), &x, &mut expected, len);
        both_match!(plans, format!("Stream, run {run}, len {len}"), &expected);
    }

    // A fixed count of chunks clamped by the run's length: those past it
    // are empty, a shape of their own.
    let mut plans = direct_and_replayed!(Clamped::new(&ctx, CAP, 1000, 12)?, &x, &y);
    let mut expected = y.clone();
    for (run, len) in LENGTHS.into_iter().enumerate() {
        for plan in &mut plans {
            plan.run(len, a_of(run))?;
        }
        saxpy(a_of(run), &x, &mut expected, len);
        both_match!(plans, format!("Clamped, run {run}, len {len}"), &expected);
    }

    // A fill, a launch and a copy of one result per chunk.
    let input: Vec<u32> = (0..CAP as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let mut plans = [
        ChunkSums::new(&ctx, CAP, 1000)?,
        ChunkSums::new(&ctx, CAP, 1000)?,
    ];
    plans[1].set_replay(Replay::Graph)?;
    for plan in &mut plans {
        plan.host_mut().input.copy_from_slice(&input);
    }
    for (run, len) in LENGTHS.into_iter().enumerate() {
        for plan in &mut plans {
            plan.host_mut().sums.fill(u64::MAX);
            plan.run(len)?;
        }
        same(
            &format!("ChunkSums replayed against direct, run {run}, len {len}"),
            plans[1].host().sums,
            plans[0].host().sums,
        )?;
        let first: u64 = input[..len.min(1000)].iter().map(|&v| u64::from(v)).sum();
        let got = plans[1].host().sums[0];
        let expected = if len == 0 { u64::MAX } else { first };
        ensure!(
            got == expected,
            "run {run}, len {len}: first sum {got}, expected {expected}"
        );
    }
    Ok(())
}

fn more_shapes_than_graphs_kept() -> Result<(), Failed> {
    let ctx = context()?;
    let m = 1000;
    let (x, y) = (floats(CAP), floats(CAP));
    let mut plan = given!(Stream::new(&ctx, CAP, m, 2)?, Replay::Graph, &x, &y);
    let mut expected = y.clone();
    // Twice through more loop counts than graphs are kept, then one
    // count again and again: every run right, whichever graph it finds.
    let shapes = GRAPHS_KEPT + 3;
    let counts = (1..=shapes).chain(1..=shapes).chain([2, 2, shapes, 2]);
    for (run, chunks) in counts.enumerate() {
        let len = chunks * m - run % 7;
        plan.run(len, a_of(run))?;
        saxpy(a_of(run), &x, &mut expected, len);
        same(
            &format!("run {run}, {chunks} chunks, len {len}"),
            plan.host().y,
            &expected,
        )?;
    }
    Ok(())
}

fn values_in_fills_and_stream_ordered_memory() -> Result<(), Failed> {
    let ctx = context()?;
    let (mut plan, mut expected) = fill_then_add_one(&ctx, Replay::Graph)?;
    for (run, len) in LENGTHS.into_iter().enumerate() {
        // Values of every memset unit: 0.0 is a byte pattern, 1.5 a word.
        let v = [0.0, 1.5, -3.25][run % 3];
        plan.run(len, v)?;
        expected[..len].fill(v + 1.0);
        same(
            &format!("run {run}, len {len}, v {v}"),
            plan.host().out,
            &expected,
        )?;
    }
    Ok(())
}

fn a_refused_run_touches_no_graph() -> Result<(), Failed> {
    let ctx = context()?;
    let (x, y) = (floats(CAP), floats(CAP));
    let mut plans = direct_and_replayed!(Stream::new(&ctx, CAP, 1000, 2)?, &x, &y);
    let mut expected = y.clone();
    for plan in &mut plans {
        plan.run(CAP, 0.5)?;
    }
    saxpy(0.5, &x, &mut expected, CAP);
    // The same error, replayed or not, and nothing runs.
    let direct = plans[0]
        .run(CAP + 1, 1.0)
        .err()
        .ok_or("a run above the bound ran")?;
    let replayed = plans[1]
        .run(CAP + 1, 1.0)
        .err()
        .ok_or("a replay above the bound ran")?;
    ensure!(
        direct.to_string() == replayed.to_string(),
        "direct: {direct}\nreplayed: {replayed}"
    );
    // Given again, the same run is refused again: a run that gives what
    // the last gave resolves nothing, unless the last was refused.
    for plan in &mut plans {
        ensure!(
            plan.run(CAP + 1, 1.0).is_err(),
            "a run above the bound ran, given twice"
        );
    }
    ensure!(
        replayed.to_string().contains("len <= cap"),
        "message: {replayed}"
    );
    let refused = plans[1]
        .submit(usize::MAX, 1.0)
        .err()
        .ok_or("a submit above the bound was queued")?;
    ensure!(
        refused.to_string().contains("len <= cap"),
        "message: {refused}"
    );
    same("after refused runs", plans[1].host().y, &expected)?;
    // The graph replays on, with the run's own values.
    plans[1].run(CAP - 3, -2.0)?;
    saxpy(-2.0, &x, &mut expected, CAP - 3);
    same("after a refused run", plans[1].host().y, &expected)?;
    // And back to queuing every op.
    plans[1].set_replay(Replay::Direct)?;
    plans[1].run(CAP, 1.0)?;
    saxpy(1.0, &x, &mut expected, CAP);
    same("direct again", plans[1].host().y, &expected)
}

fn plans_a_graph_cannot_hold_are_refused() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Synchronous::new(&ctx, 1000)?;
    let error = plan
        .set_replay(Replay::Graph)
        .err()
        .ok_or("a plan with synchronous ops replays")?;
    ensure!(
        error
            .to_string()
            .contains("synchronous operations or host steps"),
        "message: {error}"
    );
    // Refused, the plan runs as before.
    plan.run(2.0)?;
    ensure!(
        plan.host().x.iter().all(|&v| v == 2.0),
        "the plan did not run"
    );
    Ok(())
}

fn a_node_grown_or_changed_back_is_right() -> Result<(), Failed> {
    let ctx = context()?;
    // A fill captured one element wide, then grown to all of them (which
    // the driver may refuse to change in place), then shrunk.
    let (mut plan, mut expected) = fill_then_add_one(&ctx, Replay::Graph)?;
    for (len, v) in [(1, 1.5), (CAP, 1.5), (7, 0.0), (CAP, -3.25), (2, -3.25)] {
        plan.run(len, v)?;
        expected[..len].fill(v + 1.0);
        same(&format!("len {len}, v {v}"), plan.host().out, &expected)?;
    }
    // A value the last run gave, but not the one this run's graph holds:
    // a whole run with a = 1, an empty one (another graph) with a = 2,
    // then a whole one with a = 2.
    let (x, y) = (floats(CAP), floats(CAP));
    let mut plan = given!(Saxpy::new(&ctx, CAP, 1)?, Replay::Graph, &x, &y);
    let mut expected = y.clone();
    for (len, a) in [(CAP, 1.0), (0, 2.0), (CAP, 2.0), (CAP, 2.0)] {
        plan.run(len, a)?;
        saxpy(2.0 * a, &x, &mut expected, len);
        same(&format!("len {len}, a {a}"), plan.host().y, &expected)?;
    }
    Ok(())
}

/// Each run's report says how it was replayed: a graph captured for a new
/// shape, and for a run of a shape kept, the nodes changed in place (a
/// copy's length, a launch's grid and arguments), none where the run gives
/// what the last gave. Not captured again where a change in place does.
fn runs_of_one_shape_change_their_graph_in_place() -> Result<(), Failed> {
    let ctx = context()?;
    let (x, y) = (floats(CAP), floats(CAP));
    let mut plan = given!(Saxpy::new(&ctx, CAP, 1)?, Replay::Graph, &x, &y);
    let mut expected = y.clone();
    let captured = Some(Replayed::Captured);
    let changed = |nodes| Some(Replayed::Changed { nodes });
    // The plan's nodes: two uploads, the launch, the download.
    let runs = [
        (CAP, 1.0, captured),
        (CAP, 1.0, changed(0)),
        (CAP, 2.0, changed(1)),
        (CAP / 2 + 1, 2.0, changed(4)),
        (0, 2.0, captured),
        (3, -1.0, changed(4)),
        (3, -1.0, changed(0)),
        // To the empty run's graph and back: each graph is compared with
        // the run again, as the other was replayed in between.
        (0, 2.0, changed(0)),
        (3, -1.0, changed(0)),
        (3, 5.0, changed(1)),
        (3, 5.0, changed(0)),
    ];
    for (len, a, how) in runs {
        let report = plan.run(len, a)?;
        saxpy(2.0 * a, &x, &mut expected, len);
        same(&format!("len {len}, a {a}"), plan.host().y, &expected)?;
        ensure!(
            report.replayed == how,
            "len {len}, a {a}: replayed {:?}, expected {how:?}",
            report.replayed
        );
    }
    // Queued op by op: no replay to report.
    plan.set_replay(Replay::Direct)?;
    let report = plan.run(CAP, 1.0)?;
    ensure!(report.replayed.is_none(), "{:?}", report.replayed);
    Ok(())
}

fn a_replay_in_flight_is_waited_for() -> Result<(), Failed> {
    let ctx = context()?;
    let (x, y) = (floats(CAP), floats(CAP));
    let mut plan = given!(Saxpy::new(&ctx, CAP, 50)?, Replay::Graph, &x, &y);
    let mut expected = y.clone();
    // The host's view waits for the replay submitted.
    plan.submit(CAP, 0.5)?;
    saxpy(1.0, &x, &mut expected, CAP);
    same("host() after submit", plan.host().y, &expected)?;
    // Back to queuing while a replay is on the GPU: it is waited for.
    plan.submit(CAP, 0.5)?;
    plan.set_replay(Replay::Direct)?;
    saxpy(1.0, &x, &mut expected, CAP);
    same("set_replay after submit", plan.host().y, &expected)?;
    // Timing on: a replayed run reports its wall time, not each op's.
    plan.set_replay(Replay::Graph)?;
    plan.set_timing(true)?;
    let report = plan.run(CAP, 0.5)?;
    saxpy(1.0, &x, &mut expected, CAP);
    ensure!(
        report.ops.is_empty(),
        "a replay timed {} ops",
        report.ops.len()
    );
    same("timed replay", plan.host().y, &expected)?;
    // A plan dropped with a replay on the GPU waits for it first.
    plan.submit(CAP, 0.5)?;
    drop(plan);
    Ok(())
}

fn a_failed_capture_leaves_the_plan_usable() -> Result<(), Failed> {
    let ctx = context()?;
    // 2^42 floats: no GPU has 16 TiB for the graph to allocate.
    let mut plan = TooBig::new(&ctx, 1000, 1 << 42)?;
    plan.set_replay(Replay::Graph)?;
    for _ in 0..2 {
        ensure!(plan.run(1.0).is_err(), "16 TiB were allocated");
    }
    plan.set_replay(Replay::Direct)?;
    ensure!(plan.run(1.0).is_err(), "16 TiB were allocated");
    // What does fit runs on, replayed, in a plan made after.
    let mut plan = TooBig::new(&ctx, 1000, 10)?;
    plan.set_replay(Replay::Graph)?;
    for v in [1.0, 2.0] {
        plan.run(v)?;
        ensure!(plan.host().out.iter().all(|&o| o == v), "v {v}");
    }
    Ok(())
}

/// Runs that give the sizes of the last run and new values write the
/// values into the steps resolved for those sizes (launch arguments, fill
/// values), run directly and replayed, on plans resolved op by op and
/// plans unrolled at each run; then a new size, and the values again.
fn values_change_while_sizes_stay() -> Result<(), Failed> {
    let ctx = context()?;
    let (x, y) = (floats(CAP), floats(CAP));
    let runs = [
        (CAP - 5, 0.5),
        (CAP - 5, -1.0),
        (CAP - 5, 2.0),
        (CAP - 5, 2.0),
        (CAP - 5, 0.25),
        (1000, 0.25),
        (1000, 3.0),
        (CAP - 5, 3.0),
        (CAP - 5, -0.5),
    ];
    for replay in [Replay::Direct, Replay::Graph] {
        // Resolved op by op (no loop).
        let mut plan = given!(Saxpy::new(&ctx, CAP, 1)?, replay, &x, &y);
        let mut expected = y.clone();
        for (run, (len, a)) in runs.into_iter().enumerate() {
            plan.run(len, a)?;
            saxpy(2.0 * a, &x, &mut expected, len);
            same(
                &format!("Saxpy {replay:?}, run {run}"),
                plan.host().y,
                &expected,
            )?;
        }
        // Unrolled at each run: a loop whose count is the run's length's.
        let mut plan = given!(Stream::new(&ctx, CAP, 1000, 3)?, replay, &x, &y);
        let mut expected = y.clone();
        for (run, (len, a)) in runs.into_iter().enumerate() {
            plan.run(len, a)?;
            saxpy(a, &x, &mut expected, len);
            same(
                &format!("Stream {replay:?}, run {run}"),
                plan.host().y,
                &expected,
            )?;
        }
        // A fill of the run's value.
        let (mut plan, mut expected) = fill_then_add_one(&ctx, replay)?;
        for (run, (len, v)) in runs.into_iter().enumerate() {
            plan.run(len, v)?;
            expected[..len].fill(v + 1.0);
            same(
                &format!("FillThenAddOne {replay:?}, run {run}"),
                plan.host().out,
                &expected,
            )?;
        }
        // The same length, values whose memset unit differs (0.0 is a
        // byte pattern, -0.0 a word).
        for (run, v) in [1.5f32, 0.0, -0.0, 0.0, 2.0].into_iter().enumerate() {
            plan.run(1000, v)?;
            expected[..1000].fill(v + 1.0);
            let what = format!("FillThenAddOne {replay:?}, unit run {run}");
            same(&what, plan.host().out, &expected)?;
        }
        // An extent measured from a value: refused at every run that
        // gives one too long or negative, right at every run in between.
        let mut plan = Counted::new(&ctx, 1000)?;
        plan.set_replay(replay)?;
        for (m, ok) in [
            (4, true),
            (1008, false),
            (1008, false),
            (-5, false),
            (4, true),
            (10, true),
        ] {
            let ran = plan.run(m);
            ensure!(
                ran.is_ok() == ok,
                "Counted {replay:?}, m {m}: {:?}",
                ran.err()
            );
            if ok {
                let out = plan.host().out;
                let ones = usize::try_from(m)?;
                ensure!(
                    out[..ones].iter().all(|&o| o == 1.0) && out[ones..].iter().all(|&o| o == 0.0),
                    "Counted {replay:?}, m {m}: {:?}",
                    &out[..12]
                );
            }
        }
    }
    Ok(())
}

/// `graph(len, a)` of a plan with `run` parameters: the graph holds that
/// run (its length and value), replayed as it is, and matches runs made
/// directly, also with stream-ordered memory, in a plan replayed from
/// graphs already, and with a loop whose count the length gives; a run
/// its checks refuse is refused by `graph` the same way.
fn a_graph_of_one_run_replays_its_sizes_and_values() -> Result<(), Failed> {
    let ctx = context()?;
    let (x, y) = (floats(CAP), floats(CAP));
    let mut plan = given!(Saxpy::new(&ctx, CAP, 2)?, Replay::Direct, &x, &y);
    let mut expected = y.clone();
    for (len, a) in [(CAP - 1234, 0.5), (0, 3.0), (1, -2.0), (CAP, 0.25)] {
        let mut graph = plan.graph(len, a)?;
        for replay in 0..3 {
            graph.run()?;
            saxpy(2.0 * a, &x, &mut expected, len);
            same(
                &format!("graph of len {len}, replay {replay}"),
                graph.host().y,
                &expected,
            )?;
        }
        drop(graph);
        // A direct run after the graph's: the plan resolves its own run.
        plan.run(len / 2, a)?;
        saxpy(2.0 * a, &x, &mut expected, len / 2);
        same(
            &format!("run of len {} after the graph", len / 2),
            plan.host().y,
            &expected,
        )?;
    }
    // Stream-ordered memory the graph allocates and frees at each replay,
    // in a plan replayed from graphs already, and a direct run after.
    let (mut plan, mut out) = fill_then_add_one(&ctx, Replay::Graph)?;
    for (len, v) in [(CAP - 1234, 1.5), (0, 2.0), (CAP, -3.25)] {
        plan.run(len / 3, 0.0)?;
        out[..len / 3].fill(1.0);
        let mut graph = plan.graph(len, v)?;
        for replay in 0..2 {
            graph.run()?;
            out[..len].fill(v + 1.0);
            same(
                &format!("FillThenAddOne graph of len {len}, replay {replay}"),
                graph.host().out,
                &out,
            )?;
        }
    }
    // A loop whose count the run's length gives, unrolled for the graph.
    let mut plan = given!(Stream::new(&ctx, CAP, 1000, 3)?, Replay::Direct, &x, &y);
    let mut expected = y.clone();
    for (len, a) in [(CAP, 0.5), (1001, -1.0), (CAP - 1234, 2.0)] {
        let mut graph = plan.graph(len, a)?;
        graph.run()?;
        saxpy(a, &x, &mut expected, len);
        same(
            &format!("Stream graph of len {len}"),
            graph.host().y,
            &expected,
        )?;
    }
    let mut plan = given!(Saxpy::new(&ctx, CAP, 2)?, Replay::Direct, &x, &expected);
    let refused = |error: Option<memplan::Error>| error.map(|e| e.to_string());
    let by_graph = refused(plan.graph(CAP + 1, 1.0).err()).ok_or("a graph past the capacity")?;
    let by_run = refused(plan.run(CAP + 1, 1.0).err()).ok_or("a run past the capacity ran")?;
    ensure!(by_graph == by_run, "graph: {by_graph}\nrun: {by_run}");
    // Nothing ran: the plan goes on from where it was.
    plan.run(CAP, 1.0)?;
    saxpy(2.0, &x, &mut expected, CAP);
    same("a run after the refusals", plan.host().y, &expected)?;
    Ok(())
}

/// A plan whose launches read one of two values each: a run that changes
/// one changes the nodes of the launches that read it, and only those
/// (the others' bytes come out the same), a value changed and changed
/// back, both, neither; every run as the same runs made directly.
fn a_value_changes_only_the_launches_that_read_it() -> Result<(), Failed> {
    const K: usize = 3;
    let ctx = context()?;
    let (x, y, z) = (floats(CAP), floats(CAP), floats(CAP));
    let mut plans = [Replay::Direct, Replay::Graph].map(|replay| -> Result<_, Failed> {
        let mut plan = TwoValues::new(&ctx, CAP, K)?;
        plan.set_replay(replay)?;
        let host = plan.host_mut();
        host.x.copy_from_slice(&x);
        host.y.copy_from_slice(&y);
        host.z.copy_from_slice(&z);
        Ok(plan)
    });
    let [Ok(direct), Ok(replayed)] = &mut plans else {
        return Err("a plan could not be made".into());
    };
    let captured = Some(Replayed::Captured);
    let changed = |nodes| Some(Replayed::Changed { nodes });
    let runs = [
        (1.0, 2.0, captured),
        (1.0, 2.0, changed(0)),
        (3.0, 2.0, changed(K)),
        (3.0, -1.0, changed(K)),
        (1.0, 2.0, changed(2 * K)),
        (1.0, 2.0, changed(0)),
        (1.0, 0.5, changed(K)),
        (1.0, 2.0, changed(K)),
    ];
    let (mut expected_y, mut expected_z) = (y.clone(), z.clone());
    for (a, b, how) in runs {
        for _ in 0..K {
            saxpy(a, &x, &mut expected_y, CAP);
            saxpy(b, &x, &mut expected_z, CAP);
        }
        direct.run(a, b)?;
        let report = replayed.run(a, b)?;
        for (way, plan) in [("run directly", &*direct), ("replayed", &*replayed)] {
            same(
                &format!("a {a}, b {b}, {way}: y"),
                plan.host().y,
                &expected_y,
            )?;
            same(
                &format!("a {a}, b {b}, {way}: z"),
                plan.host().z,
                &expected_z,
            )?;
        }
        ensure!(
            report.replayed == how,
            "a {a}, b {b}: replayed {:?}, expected {how:?}",
            report.replayed
        );
    }
    Ok(())
}
