//! What no safe code can get around, on a GPU: sizes computed with checked
//! arithmetic, launches checked against the device (and skipped when they
//! have no blocks), caller memory registered once however often it is
//! passed, and the hand-written runtime's refusals of overlapping and
//! unordered copies.

use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::{DeviceBuffer, Error, Event, Fault, PinnedBuffer, Stream, copy, memplan, scope};

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "sealed::empty_input_runs_the_other_ops",
        empty_input_runs_the_other_ops,
    ),
    (
        "sealed::sizes_that_would_wrap_are_errors_naming_the_op",
        sizes_that_would_wrap_are_errors_naming_the_op,
    ),
    (
        "sealed::launches_are_checked_against_the_gpu_at_new",
        launches_are_checked_against_the_gpu_at_new,
    ),
    (
        "sealed::one_slice_passed_twice_is_registered_once",
        one_slice_passed_twice_is_registered_once,
    ),
    (
        "sealed::threads_share_a_registered_slice",
        threads_share_a_registered_slice,
    ),
    (
        "sealed::measured_slices_are_checked_at_each_run",
        measured_slices_are_checked_at_each_run,
    ),
    (
        "sealed::the_engine_refuses_runs_without_the_slices",
        the_engine_refuses_runs_without_the_slices,
    ),
    (
        "sealed::a_run_value_of_another_type_is_refused",
        a_run_value_of_another_type_is_refused,
    ),
    (
        "sealed::a_fill_value_of_another_type_is_refused",
        a_fill_value_of_another_type_is_refused,
    ),
    (
        "sealed::scopes_refuse_overlapping_and_unordered_copies",
        scopes_refuse_overlapping_and_unordered_copies,
    ),
];

memplan! {
    /// Adds one over `n` elements, then writes a flag: with `n = 0` the
    /// launch has no blocks, and everything else still runs.
    plan Empty(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   data: [f32; n] pinned, done: [u32; 1] pinned;
        device on_gpu: [f32; n], flag: [u32; 1];
        stream work;
        on work {
            copy data -> on_gpu;
            launch process_data<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
            copy on_gpu -> data;
            fill flag with 7;
            copy flag -> done;
        }
    }

    /// `k + 2` wraps to 1 for `k = usize::MAX` in unchecked release code.
    plan Wrapping(k: usize) {
        host   h: [f32; 4] pinned;
        device d: [f32; 4];
        stream s;
        on s {
            copy h[k + 2..2] -> d[k + 2..2];
        }
    }

    /// A signed parameter cast to `usize`: opaque, and checked.
    plan Shifted(n: usize, shift: isize) {
        device d: [f32; n];
        stream s;
        on s {
            fill d with 1.0;
            fill d[shift as usize..] with 0.0;
        }
    }

    /// Launch dimensions from sizes: each checked to fit, and against the GPU.
    plan Configured(n: usize, grid: usize, block: usize, shared: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   data: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        on s {
            copy data -> d;
            launch process_data<<<grid as u32, block as u32, shared as u32>>>(d, n as i32);
            copy d -> data;
        }
    }

    /// Two read-only registered slices, which may be one memory.
    plan AddSlices(n: usize, a: &[f32; n] registered, b: &[f32; n] registered, c: &mut [f32; n] registered) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream s;
        on s {
            copy a -> da;
            copy b -> db;
            launch vadd<<<blocks(n, 256), 256>>>(da, db, dc, n as i32);
            copy dc -> c;
        }
    }

    /// Slices of any length: the ranges over them are checked at each run,
    /// and a host step reads one.
    plan Head(from: &[f32], to: &mut [f32], total: &mut [f32; 1]) {
        copy from[..2] -> to[..2];
        host(&from, &mut total) {
            total[0] = from.iter().sum();
        }
    }
}

fn empty_input_runs_the_other_ops() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Empty::new(&ctx, 0)?;
    plan.run()?;
    ensure!(
        plan.host().done == [7],
        "the ops after the empty launch did not run: {:?}",
        plan.host().done
    );
    // The same plan type on real input still adds one.
    let mut plan = Empty::new(&ctx, 1000)?;
    let data = floats(1000);
    plan.host_mut().data.copy_from_slice(&data);
    plan.run()?;
    let expected: Vec<f32> = data.iter().map(|x| x + 1.0).collect();
    same("add one", plan.host().data, &expected)
}

/// The error names `op`, and its fault matches.
fn names(error: &Error, op: &str, fault: fn(&Fault) -> bool) -> Result<(), Failed> {
    ensure!(
        error.operation() == op && fault(error.fault()),
        "expected an error of `{op}`, got: {error}"
    );
    ensure!(
        error.location().file.ends_with("sealed.rs"),
        "location: {}",
        error.location()
    );
    Ok(())
}

fn sizes_that_would_wrap_are_errors_naming_the_op() -> Result<(), Failed> {
    let ctx = context()?;
    Wrapping::new(&ctx, 0)?.run()?;
    let op = "copy h[k + 2..2] -> d[k + 2..2]";
    let error = Wrapping::new(&ctx, usize::MAX)
        .err()
        .ok_or("k + 2 wrapped")?;
    names(&error, op, |f| {
        matches!(f, Fault::Size { size: "k + 2", .. })
    })?;
    ensure!(
        error
            .to_string()
            .contains("overflows usize (k = 18446744073709551615)"),
        "{error}"
    );
    let error = Wrapping::new(&ctx, 1).err().ok_or("3..2 was accepted")?;
    names(&error, op, |f| {
        matches!(f, Fault::ReversedRange { start: 3, end: 2 })
    })?;

    let mut shifted = Shifted::new(&ctx, 16, 4)?;
    shifted.run()?;
    let error = Shifted::new(&ctx, 16, -1)
        .err()
        .ok_or("a negative shift was accepted")?;
    names(&error, "fill d[shift as usize..] with 0.0", |f| {
        matches!(
            f,
            Fault::ReversedRange {
                start: usize::MAX,
                end: 16
            }
        )
    })?;
    Ok(())
}

fn launches_are_checked_against_the_gpu_at_new() -> Result<(), Failed> {
    let ctx = context()?;
    let launch = "launch process_data";
    let mut plan = Configured::new(&ctx, 4096, 16, 256, 0)?;
    let data = floats(4096);
    plan.host_mut().data.copy_from_slice(&data);
    plan.run()?;
    let expected: Vec<f32> = data.iter().map(|x| x + 1.0).collect();
    same(
        "a grid-stride kernel over 16 blocks",
        plan.host().data,
        &expected,
    )?;

    /// A configuration `new` must refuse: (grid, block, shared bytes).
    struct Refused {
        config: (usize, usize, usize),
        what: &'static str,
        fault: fn(&Fault) -> bool,
    }
    let launch_fault = |f: &Fault| matches!(f, Fault::Launch(_));
    let cases = [
        Refused {
            config: (1 << 32, 256, 0),
            what: "a grid beyond u32",
            fault: |f| {
                matches!(
                    f,
                    Fault::Size {
                        size: "grid as u32",
                        ..
                    }
                )
            },
        },
        Refused {
            config: (u32::MAX as usize, 256, 0),
            what: "a grid beyond the GPU's",
            fault: launch_fault,
        },
        Refused {
            config: (1, 2048, 0),
            what: "a block of 2048 threads",
            fault: launch_fault,
        },
        Refused {
            config: (1, 0, 0),
            what: "a block of no threads",
            fault: launch_fault,
        },
        Refused {
            config: (1, 256, 1 << 24),
            what: "16 MiB of shared memory",
            fault: launch_fault,
        },
    ];
    for Refused {
        config,
        what,
        fault,
    } in cases
    {
        let (grid, block, shared) = config;
        let error = Configured::new(&ctx, 16, grid, block, shared)
            .err()
            .ok_or(format!("{what} was accepted"))?;
        names(&error, launch, fault)?;
    }
    // Above the default 48 KiB, the kernel is opted in where the GPU allows.
    let mut plan = Configured::new(&ctx, 16, 1, 32, 64 << 10)?;
    plan.run()?;
    Ok(())
}

fn one_slice_passed_twice_is_registered_once() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 100_003; // not a whole number of pages
    let mut plan = AddSlices::new(&ctx, n)?;
    let data = floats(2 * n + 1);
    let mut sum = vec![0.0f32; n];
    for round in 0..2 {
        plan.run(&data[..n], &data[..n], &mut sum)?;
        let doubled: Vec<f32> = data[..n].iter().map(|x| x + x).collect();
        same(&format!("a + a, round {round}"), &sum, &doubled)?;
    }
    // Overlapping, and apart but sharing a page.
    for (a, b) in [(0..n, 1..n + 1), (0..n, n..2 * n)] {
        plan.run(&data[a.clone()], &data[b.clone()], &mut sum)?;
        let expected: Vec<f32> = data[a].iter().zip(&data[b]).map(|(x, y)| x + y).collect();
        same("a + b", &sum, &expected)?;
    }
    Ok(())
}

fn threads_share_a_registered_slice() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 1 << 20;
    let data = floats(n);
    let doubled: Vec<f32> = data.iter().map(|x| x + x).collect();
    // Each run locks `data`; whichever ends first must not unlock it under
    // the other's copies.
    std::thread::scope(|threads| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let (ctx, data, doubled) = (ctx.clone(), &data, &doubled);
                threads.spawn(move || -> Result<(), Failed> {
                    ctx.bind_to_thread()?;
                    let mut plan = AddSlices::new(&ctx, n)?;
                    let mut sum = vec![0.0f32; n];
                    for _ in 0..20 {
                        plan.run(data, data, &mut sum)?;
                        same("a + a on two threads", &sum, doubled)?;
                    }
                    Ok(())
                })
            })
            .collect();
        runs.into_iter()
            .map(|run| run.join().map_err(|_| Failed::from("a thread panicked"))?)
            .collect::<Result<Vec<()>, Failed>>()
    })?;
    Ok(())
}

fn measured_slices_are_checked_at_each_run() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Head::new(&ctx)?;
    let (from, mut to, mut total) = ([1.0f32, 2.0, 3.0], [0.0f32; 4], [0.0f32]);
    plan.run(&from, &mut to, &mut total)?;
    ensure!(to == [1.0, 2.0, 0.0, 0.0], "copied {to:?}");
    ensure!(total == [6.0], "the host step summed {total:?}");
    let error = plan
        .run(&from[..1], &mut to, &mut total)
        .err()
        .ok_or("a range past a short slice was accepted")?;
    names(&error, "copy from[..2] -> to[..2]", |f| {
        matches!(f, Fault::OutOfBounds { end: 2, len: 1, .. })
    })
}

fn the_engine_refuses_runs_without_the_slices() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = AddSlices::new(&ctx, 16)?;
    // Code in this module sees the plan's engine; it can do no harm with it.
    let error = plan.0.run().err().ok_or("a run without its slices")?;
    ensure!(matches!(error.fault(), Fault::Unsupported(_)), "{error}");
    let error = plan
        .0
        .enqueue()
        .err()
        .ok_or("an enqueue of borrowed slices")?;
    ensure!(matches!(error.fault(), Fault::Unsupported(_)), "{error}");
    Ok(())
}

memplan! {
    /// Adds one to the first `m` elements, `m` given to each run.
    plan PerRun(cap: usize, run m: i32) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; cap];
        fill d with 0.0;
        launch process_data<<<blocks(cap, 256), 256>>>(d, m);
    }
}

memplan! {
    /// Fills `d` with the value each run gives.
    plan FillRun(cap: usize, run v: f32) {
        host   out: [f32; cap] pinned;
        device d: [f32; cap];
        stream s;
        on s {
            fill d with v;
            copy d -> out;
        }
    }
}

/// A fill's value of another type, with the very bytes the last run gave
/// (a run that gives what the last gave resolves nothing again): refused.
fn a_fill_value_of_another_type_is_refused() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = FillRun::new(&ctx, 256)?;
    plan.run(1.0)?;
    let given = |_: &_, given: &mut memplan::__private::RunGiven| {
        given.fill::<u32>(0, 1.0f32.to_bits());
    };
    let error = plan
        .0
        .run_given(Some(&given), &mut [])
        .err()
        .ok_or("a u32 fill was taken for an f32 one")?;
    ensure!(
        matches!(error.fault(), Fault::Unsupported(why) if why.contains("inconsistent")),
        "a fill value of another type is refused as not the plan's: {error}"
    );
    plan.run(2.0)?;
    ensure!(
        plan.host().out.iter().all(|&o| o == 2.0),
        "the plan did not run"
    );
    Ok(())
}

fn a_run_value_of_another_type_is_refused() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = PerRun::new(&ctx, 256)?;
    plan.run(256)?;
    // Code in this module reaches the engine's hidden entry points: a
    // `u32` where the kernel takes an `int` has the parameter's layout and
    // not its type. (Of 3e9, the kernel would read a negative count; the
    // extent, 3e9 elements of a buffer of 256, refuses that one first.)
    let mut run_with = |count: u32| {
        let given = move |_: &_, given: &mut memplan::__private::RunGiven| {
            given.value::<u32>(1, 1, count);
        };
        plan.0.run_given(Some(&given), &mut []).err()
    };
    let error = run_with(3_000_000_000).ok_or("a u32 of 3e9 was passed for an int")?;
    ensure!(error.operation() == "launch process_data", "{error}");
    let error = run_with(100).ok_or("a u32 of 100 was passed for an int")?;
    ensure!(
        error.operation() == "launch process_data"
            && matches!(error.fault(), Fault::Unsupported(why) if why.contains("inconsistent")),
        "a value of another type is refused as not the plan's: {error}"
    );
    plan.run(128)?;
    Ok(())
}

fn scopes_refuse_overlapping_and_unordered_copies() -> Result<(), Failed> {
    let ctx = context()?;
    let (first, second) = (Stream::new(&ctx)?, Stream::new(&ctx)?);
    let mut host = PinnedBuffer::from_slice(&ctx, &floats(64), Default::default())?;
    let device = DeviceBuffer::<f32>::new(&ctx, 64)?;
    let overlapping = scope(|s| {
        let lent = s.lend(&mut host);
        s.copy_range(&first, lent, 0..32, lent, 16..48)
    });
    let error = overlapping.err().ok_or("an overlapping copy was queued")?;
    ensure!(error.fault() == &Fault::OverlappingCopy, "{error}");
    let within = copy::dtod(&device, 0..32, &device, 16..48);
    ensure!(within == Err(Fault::OverlappingCopy), "{within:?}");

    let unordered = scope(|s| {
        let lent = s.lend(&mut host);
        s.copy(&first, &device, lent)?;
        s.copy(&second, lent, &device)
    });
    let error = unordered
        .err()
        .ok_or("an unordered write and read were queued")?;
    ensure!(
        matches!(error.fault(), Fault::Unordered { other } if other.file.ends_with("sealed.rs")),
        "{error}"
    );

    let nested = scope(|outer| {
        let lent = outer.lend(&mut host);
        outer.copy(&first, &device, lent)?;
        // The inner scope's account does not see the outer's copy.
        scope(|inner| inner.copy(&second, lent, &device))
    });
    let error = nested
        .err()
        .ok_or("a buffer lent to the outer scope was used in an inner one")?;
    ensure!(matches!(error.fault(), Fault::Unsupported(_)), "{error}");

    // (The refused scopes' first copies ran: they wrote `host`.)
    let expected = floats(64);
    host.copy_from_slice(&expected);
    let mut copied = Event::new(&ctx)?;
    scope(|s| {
        let lent = s.lend(&mut host);
        s.copy(&first, lent, &device)?;
        let mark = s.record(&mut copied, &first)?;
        s.wait(&second, mark)?;
        s.copy(&second, &device, lent)
    })?;
    same("ordered by an event", &host, &expected)
}
