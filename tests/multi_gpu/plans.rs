//! NCCL collectives as plan operations: each GPU's part an op on its
//! stream, queued together by memplan; a plan that is one rank of a job;
//! and what `new` refuses (a collective some GPU does not take part in,
//! parts that would wait for each other for ever, processes of one job
//! that made their plans with other sizes).

use crate::collectives::{ONE_AT_A_TIME, on_a_thread_each};
use crate::harness::GpuTest;
use libtest_mimic::Failed;
use memplan::nccl::{Rank, UniqueId};
use memplan::prelude::*;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "multi_gpu::plans::an_all_reduce_in_a_plan_sums_on_every_gpu",
        an_all_reduce_in_a_plan_sums_on_every_gpu,
    ),
    (
        "multi_gpu::plans::every_collective_in_one_plan",
        every_collective_in_one_plan,
    ),
    (
        "multi_gpu::plans::a_plan_per_gpu_joins_one_job",
        a_plan_per_gpu_joins_one_job,
    ),
    (
        "multi_gpu::plans::new_refuses_collectives_that_cannot_meet",
        new_refuses_collectives_that_cannot_meet,
    ),
    (
        RANKS_THAT_DISAGREE,
        ranks_that_disagree_are_refused_by_every_rank,
    ),
    (
        "multi_gpu::plans::ranks_replay_their_collectives",
        ranks_replay_their_collectives,
    ),
    (
        "multi_gpu::plans::a_run_that_panics_on_one_rank_fails_on_every_rank",
        a_run_that_panics_on_one_rank_fails_on_every_rank,
    ),
];

const RANKS_THAT_DISAGREE: &str = "multi_gpu::plans::ranks_that_disagree_are_refused_by_every_rank";

/// Set in a child process of [`ranks_that_disagree_are_refused_by_every_rank`]:
/// `id:rank:count:n:shard:len:plan`, the rank it plays (`plan`: `Uneven`;
/// `BySlice`, whose `len` is its caller's slice's; `ByValue`, whose `len`
/// is its run's count).
const RANK_CHILD: &str = "MEMPLAN_TEST_RANK_CHILD";

memplan! {
    /// Each GPU doubles its shard, the doubled shards are summed on every
    /// GPU, and each GPU's sum comes back.
    pub plan Reduce(n: usize, g: usize) {
        gpus   gpu[g];
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
        host   x: [f32; n * g] pinned, y: [f32; n * g] pinned;
        device part[g]: [f32; n] on gpu, doubled[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            let mine = i * n..(i + 1) * n;
            on s[i] {
                copy x[mine] -> part[i];
                launch scale_by_two<<<blocks(n, 256), 256>>>(part[i], doubled[i], n as i32);
                all_reduce sum doubled[i];
                copy doubled[i] -> y[mine];
            }
        }
    }
}

memplan! {
    /// A ring of sends, a broadcast in place, a gather, a reduce-scatter.
    plan Every(n: usize, g: usize) {
        gpus   gpu[g];
        host   x: [i32; n * g] pinned, gathered: [i32; n * g * g] pinned, y: [i32; n * g] pinned;
        device mine[g]: [i32; n] on gpu, left[g]: [i32; n] on gpu, all[g]: [i32; n * g] on gpu,
               block[g]: [i32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                copy x[i * n..(i + 1) * n] -> mine[i];
                send mine[i] to (i + 1) % g;
                recv left[i] from (i + g - 1) % g;
                broadcast left[i] from 0;
                all_gather left[i] -> all[i];
                copy all[i] -> gathered[i * n * g..(i + 1) * n * g];
                reduce_scatter max all[i] -> block[i];
                copy block[i] -> y[i * n..(i + 1) * n];
            }
        }
    }
}

memplan! {
    /// One rank of a job: its gradients averaged with the others'.
    pub plan Joined(n: usize) {
        ranks  world;
        host   x: [f32; n] pinned, y: [f32; n] pinned;
        device grads: [f32; n], sums: [f32; n];
        stream s;
        on s {
            copy x -> grads;
            all_reduce avg grads -> sums;
            copy sums -> y;
        }
    }
}

memplan! {
    /// One rank of a job that all-reduces as many gradients as its
    /// caller's slice holds: a length each run measures.
    pub plan BySlice(cap: usize, xs: &[f32] registered, ys: &mut [f32] registered) {
        ranks  world;
        device grads: [f32; cap];
        stream s;
        on s {
            copy xs -> grads[..xs.len()];
            all_reduce sum grads[..xs.len()];
            copy grads[..xs.len()] -> ys[..xs.len()];
        }
    }
}

memplan! {
    /// One rank of a job whose runs differ by a value only: the count its
    /// kernel is given, which each run checks against `d`.
    pub plan ByValue(n: usize, run count: i32) {
        ranks  world;
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        stream s;
        on s {
            fill d with 0.0;
            launch process_data<<<blocks(n, 256), 256>>>(d, count);
            all_reduce sum d;
        }
    }
}

memplan! {
    /// One rank of a job whose kernel's value is a run's expression that
    /// divides by what the run gives: a run given 0 panics in it.
    pub plan Divided(n: usize, run parts: i32) {
        ranks  world;
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   out: [f32; n] pinned;
        device x: [f32; n], y: [f32; n];
        stream s;
        on s {
            fill x with 1.0;
            fill y with 0.0;
            launch saxpy<<<blocks(n, 256), 256>>>(n as i32, (64 / parts) as f32, x, y);
            all_reduce sum y;
            copy y -> out;
        }
    }
}

memplan! {
    /// One rank of a job whose shard is its own (no collective reads
    /// `local`), and whose runs all-reduce the first `len` gradients.
    pub plan Uneven(n: usize, shard: usize, run len: usize) {
        ranks  world;
        host   x: [f32; n] pinned, mine: [f32; shard] pinned;
        device grads: [f32; n], local: [f32; shard];
        stream s;
        on s {
            copy x -> grads;
            copy mine -> local;
            all_reduce sum grads[..len];
            copy grads -> x;
            copy local -> mine;
        }
    }
}

memplan! {
    /// GPU 0 alone takes part: GPU 1 never would.
    plan Alone(n: usize, g: usize) {
        gpus   gpu[g];
        device a: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s { fill a with 1.0; all_reduce sum a; }
    }
}

memplan! {
    /// GPU 1's part waits, through `up`, for what follows GPU 0's.
    plan Stuck(n: usize, g: usize) {
        gpus   gpu[g];
        device a[g]: [f32; n] on gpu;
        stream s[g] on gpu, up on gpu[0];
        event  reduced, loaded[g];
        for i in 0..g {
            on up { wait reduced; record loaded[i]; }
            on s[i] { wait loaded[i]; fill a[i] with 1.0; all_reduce sum a[i]; record reduced; }
        }
    }
}

pub const N: usize = 1 << 18;

pub fn gpus() -> memplan::Result<Vec<Context>> {
    (0..Context::count()).map(Context::new).collect()
}

fn an_all_reduce_in_a_plan_sums_on_every_gpu() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = gpus()?;
    let g = gpus.len();
    let mut plan = Reduce::new(&gpus, N, g)?;
    let x: Vec<f32> = (0..N * g).map(|i| (i % 1013) as f32 - 400.0).collect();
    plan.host_mut().x.copy_from_slice(&x);
    for _ in 0..2 {
        plan.run()?;
        let y = &plan.host().y;
        for r in 0..g {
            for i in 0..N {
                let sum: f32 = (0..g).map(|k| 2.0 * x[k * N + i]).sum();
                ensure!(
                    y[r * N + i] == sum,
                    "GPU {r}, element {i}: {} for {sum}",
                    y[r * N + i]
                );
            }
        }
    }
    Ok(())
}

fn every_collective_in_one_plan() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = gpus()?;
    let g = gpus.len();
    let n = 4096;
    let mut plan = Every::new(&gpus, n, g)?;
    let x: Vec<i32> = (0..n * g).map(|i| i as i32 * 3 - 7).collect();
    plan.host_mut().x.copy_from_slice(&x);
    plan.run()?;
    // GPU 0 received GPU g - 1's `mine` and broadcast it: every GPU gathers
    // g copies of it, and their maximum, block by block, is that again.
    let last = &x[(g - 1) * n..g * n];
    let host = plan.host();
    for r in 0..g {
        for k in 0..g {
            let at = r * n * g + k * n;
            ensure!(
                &host.gathered[at..at + n] == last,
                "GPU {r}'s gathered block {k}"
            );
        }
        ensure!(
            &host.y[r * n..(r + 1) * n] == last,
            "GPU {r}'s reduced block"
        );
    }
    Ok(())
}

fn a_plan_per_gpu_joins_one_job() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = gpus()?;
    let count = gpus.len();
    let id = UniqueId::new()?;
    // A thread per rank, as a process per GPU would be: `new` returns once
    // every rank has joined.
    let results = on_a_thread_each(count, |rank| {
        let mut plan = Joined::new(&gpus[rank], &Rank { id, count, rank }, N)?;
        plan.host_mut().x.fill(rank as f32 * 2.0 + 1.0);
        plan.run()?;
        Ok(plan.host().y.to_vec())
    });
    // The average of 1, 3, 5, ...: the rank count.
    for (rank, result) in results.into_iter().enumerate() {
        let y = result?;
        ensure!(
            y.iter().all(|&v| v == count as f32),
            "rank {rank}: {:?}",
            &y[..4]
        );
    }
    Ok(())
}

/// A rank per thread, each run replayed from a CUDA graph with its
/// all-reduce captured in it (`set_replay(Replay::Graph)`): lengths that
/// change and come back (a graph each, found again), the host's data new
/// at every run; every rank's sums right and its own shard its own. A plan
/// on several GPUs of one process is refused, naming why.
fn ranks_replay_their_collectives() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = gpus()?;
    let count = gpus.len();
    let id = UniqueId::new()?;
    let (n, shard) = (1 << 16, 100);
    let lengths = [n, n / 2, n, n / 2, 3, n];
    let results = on_a_thread_each(count, |rank| {
        let mut plan = Uneven::new(&gpus[rank], &Rank { id, count, rank }, n, shard)?;
        plan.set_replay(Replay::Graph)?;
        let mut seen = Vec::new();
        for (run, len) in lengths.into_iter().enumerate() {
            let mine = (rank * 10 + run) as f32;
            plan.host_mut().x.fill(mine + 1.0);
            plan.host_mut().mine.fill(mine);
            plan.run(len)?;
            let host = plan.host();
            seen.push((
                host.x[0],
                host.x[len - 1],
                host.x.get(len).copied(),
                host.mine[0],
            ));
        }
        Ok(seen)
    });
    for (rank, result) in results.into_iter().enumerate() {
        for (run, (first, last, past, mine)) in result?.into_iter().enumerate() {
            // Every rank's x, summed: the sum of (10 r + run + 1) over r.
            let sum: f32 = (0..count).map(|r| (r * 10 + run + 1) as f32).sum();
            let own = (rank * 10 + run) as f32;
            ensure!(
                first == sum && last == sum,
                "rank {rank}, run {run}: {first}, {last}, expected {sum}"
            );
            ensure!(
                past.is_none_or(|past| past == own + 1.0),
                "rank {rank}, run {run}: past the length {past:?}, expected {}",
                own + 1.0
            );
            ensure!(
                mine == own,
                "rank {rank}, run {run}: shard {mine}, expected {own}"
            );
        }
    }
    // Collectives between several GPUs of one process: refused, with
    // NCCL's reason, both ways.
    let mut reduce = Reduce::new(&gpus, 1024, count)?;
    let error = reduce
        .set_replay(Replay::Graph)
        .err()
        .ok_or("collectives of several GPUs in one process replay")?;
    let said = error.to_string();
    ensure!(
        said.contains("several GPUs of one process") && said.contains("deadlock"),
        "{said}"
    );
    let error = reduce
        .graph()
        .err()
        .ok_or("collectives of several GPUs in one process are a graph")?;
    ensure!(
        error.to_string() == said.replace("set_replay", "graph"),
        "{error}\nagainst\n{said}"
    );
    Ok(())
}

fn new_refuses_collectives_that_cannot_meet() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = gpus()?;
    let g = gpus.len();
    let error = Alone::new(&gpus, 1024, g)
        .err()
        .ok_or("a collective of GPU 0 alone was accepted")?;
    let text = error.to_string();
    ensure!(
        text.contains("all_reduce sum a") && text.contains("takes part in a collective once"),
        "{text}"
    );
    let error = Stuck::new(&gpus, 1024, g)
        .err()
        .ok_or("parts that wait for each other were accepted")?;
    let text = error.to_string();
    ensure!(
        text.contains("all_reduce sum a[i]") && text.contains("wait for each other"),
        "{text}"
    );
    // One rank of one: a job of a single process.
    let id = UniqueId::new()?;
    let error = Joined::new(
        &gpus[0],
        &Rank {
            id,
            count: 1,
            rank: 1,
        },
        16,
    )
    .err()
    .ok_or("rank 1 of 1 was accepted")?;
    ensure!(error.to_string().contains("ranks world"), "{error}");
    Ok(())
}

/// A process per rank, as a launcher starts them: this test binary again,
/// running only this test, told its rank and sizes. Ranks agree where the
/// sizes their collectives depend on agree, whatever their other sizes;
/// where they do not, every rank fails alike, naming the size and what the
/// other rank was given, where NCCL would hang: `new` for sizes it is
/// given, each run for sizes the run gives; and where one rank's run
/// fails on its own, the others stop with it.
fn ranks_that_disagree_are_refused_by_every_rank() -> Result<(), Failed> {
    if let Ok(role) = std::env::var(RANK_CHILD) {
        return play_rank(&role);
    }
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let count = Context::count().min(2);
    // Each rank's `n shard len`, and what every rank said.
    let run_plan = |plan: &str, sizes: &[[usize; 3]]| -> Result<Vec<String>, Failed> {
        let id = UniqueId::new()?;
        let children: Vec<std::process::Child> = (0..count)
            .map(|rank| {
                let [n, shard, len] = sizes[rank];
                std::process::Command::new(std::env::current_exe()?)
                    .args(["--exact", RANKS_THAT_DISAGREE, "--test-threads=1"])
                    .env(
                        RANK_CHILD,
                        format!("{id}:{rank}:{count}:{n}:{shard}:{len}:{plan}"),
                    )
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
            })
            .collect::<std::io::Result<_>>()
            .map_err(|e| format!("cannot start a rank: {e}"))?;
        children
            .into_iter()
            .map(|child| {
                let output = child.wait_with_output().map_err(|e| e.to_string())?;
                let text = String::from_utf8_lossy(&output.stdout).into_owned();
                ensure!(
                    output.status.success(),
                    "a rank failed: {text}{}",
                    String::from_utf8_lossy(&output.stderr)
                );
                Ok(text)
            })
            .collect()
    };
    let run = |sizes: &[[usize; 3]]| run_plan("Uneven", sizes);
    let (n, half, quarter) = (N, N / 2, N / 4);
    // The same sizes; then shards of their own, which no collective reads.
    for sizes in [[[n, half, n]; 2], [[n, half, n], [n, quarter, n]]] {
        for (rank, said) in run(&sizes)?.iter().enumerate() {
            ensure!(
                said.contains("rank ran"),
                "rank {rank} with {sizes:?}: {said}"
            );
        }
    }
    // `n`, which `new` is given and the all-reduce's buffer is sized by.
    for (rank, said) in run(&[[n, half, n], [n + 1, half, n + 1]])?
        .iter()
        .enumerate()
    {
        let (there, here) = if rank == 0 { (n + 1, n) } else { (n, n + 1) };
        ensure!(
            said.contains("rank refused at new")
                && said.contains(&format!(
                    "made the plan with `n` {there}, this rank with {here}"
                )),
            "rank {rank} with another `n`: {said}"
        );
    }
    // `len`, which each run gives and the all-reduce's range ends at.
    for (rank, said) in run(&[[n, half, n], [n, half, half]])?.iter().enumerate() {
        let (there, here) = if rank == 0 { (half, n) } else { (n, half) };
        ensure!(
            said.contains("rank refused at run")
                && said.contains(&format!(
                    "made the plan with `len` {there}, this rank with {here}"
                )),
            "rank {rank} with another `len`: {said}"
        );
    }
    // The length of a caller's slice, which each run measures and the
    // all-reduce's range ends at: the same, then another.
    for (rank, said) in run_plan("BySlice", &[[n, 0, half]; 2])?.iter().enumerate() {
        ensure!(
            said.contains("rank ran"),
            "rank {rank} with slices alike: {said}"
        );
    }
    for (rank, said) in run_plan("BySlice", &[[n, 0, n], [n, 0, half]])?
        .iter()
        .enumerate()
    {
        let (there, here) = if rank == 0 { (half, n) } else { (n, half) };
        ensure!(
            said.contains("rank refused at run")
                && said.contains(&format!(
                    "made the plan with `xs.len()` {there}, this rank with {here}"
                )),
            "rank {rank} with a slice of another length: {said}"
        );
    }
    // A run whose value fails its checks on rank 1 alone (a count past
    // `d`): rank 0 stops with it.
    let said = run_plan("ByValue", &[[n, 0, n], [n, 0, n + 1]])?;
    rank_1_failed_alone(&said, "run", "with a count past its buffer")?;
    // Rank 1 fails while it makes its plan, after joining the job (4 TiB
    // of pinned shard): rank 0 stops at `new` instead of waiting for it.
    let said = run(&[[n, half, n], [n, 1 << 40, n]])?;
    rank_1_failed_alone(&said, "new", "that cannot make its plan")?;
    // Rank 1's run past its capacity fails there; rank 0 stops with it
    // instead of waiting in the all-reduce for ever.
    let said = run(&[[n, half, n], [n, half, n + 5]])?;
    rank_1_failed_alone(&said, "run", "past its capacity")?;
    Ok(())
}

/// Rank 1 failed on its own (at `new` or at a run, `at`), and rank 0
/// stopped with it, naming it, instead of waiting for it for ever.
fn rank_1_failed_alone(said: &[String], at: &str, case: &str) -> Result<(), Failed> {
    let refused = format!("rank refused at {at}");
    ensure!(
        said[1].contains(&refused) && !said[1].contains("rank 0 of the job"),
        "rank 1 {case}: {}",
        said[1]
    );
    ensure!(
        said[0].contains(&refused) && said[0].contains("rank 1 of the job could not go on"),
        "rank 0 beside rank 1 {case}: {}",
        said[0]
    );
    Ok(())
}

/// One rank's part, in a child process: makes the plan and runs it,
/// saying on stdout (for the parent) how far it came.
fn play_rank(role: &str) -> Result<(), Failed> {
    let fields: Vec<&str> = role.split(':').collect();
    let [id, rank, count, n, shard, len, which] = fields[..] else {
        return Err(
            format!("a rank's role is `id:rank:count:n:shard:len:plan`, not `{role}`").into(),
        );
    };
    let number = |text: &str| text.parse::<usize>().map_err(|e| e.to_string());
    let (rank, count) = (number(rank)?, number(count)?);
    let (n, shard, len) = (number(n)?, number(shard)?, number(len)?);
    let id: UniqueId = id.parse()?;
    let context = Context::new(rank)?;
    let joined = &Rank { id, count, rank };
    match which {
        "ByValue" => {
            let count = i32::try_from(len).map_err(|e| e.to_string())?;
            say(ByValue::new(&context, joined, n), |plan| {
                plan.run(count).map(|_| "rank ran".into())
            });
        }
        "BySlice" => say(BySlice::new(&context, joined, n), |plan| {
            let (xs, mut ys) = (vec![1.0f32; len], vec![0.0f32; len]);
            plan.run(&xs, &mut ys)?;
            Ok(match ys.iter().all(|&y| y == count as f32) {
                true => "rank ran".into(),
                false => format!("rank ran, and the sums are wrong: {:?}", &ys[..4.min(len)]),
            })
        }),
        _ => say(Uneven::new(&context, joined, n, shard), |plan| {
            plan.run(len).map(|_| "rank ran".into())
        }),
    }
    Ok(())
}

/// Says on stdout, for the parent, how far a rank came: refused by `new`,
/// refused by its run, or what `run` said of the run.
fn say<P>(made: memplan::Result<P>, run: impl FnOnce(&mut P) -> memplan::Result<String>) {
    match made.map(|mut plan| run(&mut plan)) {
        Err(error) => println!("rank refused at new: {error}"),
        Ok(Err(error)) => println!("rank refused at run: {error}"),
        Ok(Ok(said)) => println!("{said}"),
    }
}

/// A rank whose run panics in the plan's own expressions (a division by
/// the 0 its run gives), before the run reaches the GPU: the other ranks,
/// waiting to agree on the run, fail it with the rank named instead of
/// waiting for ever, and the next run of every rank goes ahead.
fn a_run_that_panics_on_one_rank_fails_on_every_rank() -> Result<(), Failed> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = gpus()?;
    let count = gpus.len();
    let id = UniqueId::new()?;
    let n = 1024;
    let results = on_a_thread_each(count, |rank| {
        let mut plan = Divided::new(&gpus[rank], &Rank { id, count, rank }, n)?;
        let parts = if rank == 1 { 0 } else { 1 };
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| plan.run(parts)));
        let outcome = match failed {
            Err(_) => "panicked".to_owned(),
            Ok(Err(error)) => error.to_string(),
            Ok(Ok(_)) => "ran".to_owned(),
        };
        plan.run(2)?;
        Ok((outcome, plan.host().out[0]))
    });
    for (rank, result) in results.into_iter().enumerate() {
        let (outcome, out) = result?;
        if rank == 1 {
            ensure!(outcome == "panicked", "rank 1: {outcome}");
        } else {
            ensure!(outcome.contains("rank 1"), "rank {rank}: {outcome}");
        }
        // Every rank's 64 / 2, summed.
        ensure!(
            out == 32.0 * count as f32,
            "rank {rank}: {out} after the run that failed"
        );
    }
    Ok(())
}
