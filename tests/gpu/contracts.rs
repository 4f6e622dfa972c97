//! Kernel contracts at run time: classes declared by their layout run as
//! their C++ (`float4 *` and a struct by value), a kernel without a
//! contract runs when declared `unsafe kernel`, and what only run time
//! knows is refused before anything is queued: an empty grid given a range
//! to write (at `new`, and at each `run` for a grid a run's size decides),
//! an extent a run's size makes longer than its range, a short range at
//! `new`, a write whose extent the checks cannot follow given more
//! than it writes, and a count computed at each iteration that does not
//! fit its parameter's own type (read from the type, never a spelling);
//! and atomic updates (`&atomic`) from two unordered streams add up.

use crate::data::same;
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::{Error, Fault, Float4, KernelValue, memplan};

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "contracts::atomic_updates_from_two_streams_add_up",
        atomic_updates_from_two_streams_add_up,
    ),
    (
        "contracts::classes_run_as_their_cpp",
        classes_run_as_their_cpp,
    ),
    (
        "contracts::an_unsafe_kernel_without_a_contract_runs",
        an_unsafe_kernel_without_a_contract_runs,
    ),
    (
        "contracts::an_empty_grid_given_a_range_to_write_is_refused",
        an_empty_grid_given_a_range_to_write_is_refused,
    ),
    (
        "contracts::a_run_size_past_its_range_is_refused_at_run",
        a_run_size_past_its_range_is_refused_at_run,
    ),
    (
        "contracts::a_short_range_is_refused_at_new",
        a_short_range_is_refused_at_new,
    ),
    (
        "contracts::a_write_the_checks_cannot_follow_covers_its_argument",
        a_write_the_checks_cannot_follow_covers_its_argument,
    ),
    (
        "contracts::counts_reach_the_kernel_in_each_parameters_own_type",
        counts_reach_the_kernel_in_each_parameters_own_type,
    ),
];

/// `struct Affine` of classes.cu.
#[repr(C)]
#[derive(Clone, Copy)]
struct Affine {
    scale: f32,
    offset: f32,
}

// SAFETY: two floats, as `struct Affine { float scale; float offset; }`.
unsafe impl KernelValue for Affine {
    const CPP_NAME: Option<&'static str> = Some("Affine");
}

memplan! {
    /// Each float of `h` becomes `x * a.scale + a.offset`, four at a time.
    plan Affine4(n: usize, a: Affine) {
        kernel affine4(v: &mut [Float4; n], a: Affine, n: i32) from memplan_kernels::CLASSES;
        host h: [Float4; n] pinned;
        device v: [Float4; n];
        stream s;
        on s {
            copy h -> v;
            launch affine4<<<blocks(n, 256), 256>>>(v, a, n as i32);
            copy v -> h;
        }
    }

    /// A kernel whose source states no contract: the extent is the
    /// user's promise.
    plan Uncontracted(n: usize) {
        unsafe kernel uncontracted(data: &mut [f32; n], n: i32) from memplan_kernels::SIGNATURES;
        host out: [f32; n] pinned;
        device d: [f32; n];
        fill d with 1.0;
        launch uncontracted<<<blocks(n, 256), 256>>>(d, n as i32);
        copy d -> out;
    }

    /// A grid of no blocks, and `c` counted as written by it.
    plan NoBlocks(n: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host out: [f32; n] pinned;
        device a: [f32; n], b: [f32; n], c: [f32; n];
        fill a with 1.0;
        fill b with 2.0;
        launch vadd<<<0, 256>>>(a, b, c, n as i32);
        copy c -> out;
    }

    /// The grid follows a run's length, the written range does not: a
    /// run of length 0 would leave `c` unwritten.
    plan GridOfRun(cap: usize, run len: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host out: [f32; cap] pinned;
        device a: [f32; cap], b: [f32; cap], c: [f32; cap];
        fill a with 1.0;
        fill b with 2.0;
        launch vadd<<<blocks(len, 256), 256>>>(a, b, c, cap as i32);
        copy c -> out;
    }

    /// Grid, range and extent all follow the run's length: a run of 0
    /// writes nothing and reads nothing, and is fine.
    plan AllOfRun(cap: usize, run len: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host out: [f32; cap] pinned;
        device a: [f32; cap], b: [f32; cap], c: [f32; cap];
        fill a with 1.0;
        fill b with 2.0;
        launch vadd<<<blocks(len, 256), 256>>>(a[..len], b[..len], c[..len], len as i32);
        copy c[..len] -> out[..len];
    }

    /// The count is a run's size, the range a fixed one: a run longer
    /// than `m` would write past `d[..m]`.
    plan RunCount(cap: usize, m: usize, run len: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; cap];
        fill d with 0.0;
        launch process_data<<<blocks(len, 256), 256>>>(d[..m], len as i32);
    }

    /// `n` elements from `d[n / 2..]`: in bounds for `n <= 1` only, which
    /// the arithmetic cannot rule out, so `new` decides.
    plan Middle(n: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        device a: [f32; n], b: [f32; n], d: [f32; n];
        fill a with 1.0;
        fill b with 2.0;
        launch vadd<<<blocks(n, 256), 256>>>(a, b, d[n / 2..], n as i32);
    }

    /// A count from a value the plan's arithmetic cannot follow: the
    /// checks count all of `c` as written, so the kernel must write all
    /// of it.
    plan Counted(n: usize, count: i64) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host out: [f32; n] pinned;
        device a: [f32; n], b: [f32; n], c: [f32; n];
        fill a with 1.0;
        fill b with 2.0;
        launch vadd<<<blocks(n, 256), 256>>>(a, b, c, narrow(count));
        copy c -> out;
    }
}

memplan! {
    /// For each `c`, `out[c] = a + b + c + d` of four counts, one of each
    /// width and signedness (`long long`, `unsigned`, `size_t`, `short`),
    /// computed at each iteration; `d` starts at `short_base`.
    plan Widths(k: usize, short_base: usize) {
        kernel widths(out: &out [u64; 1], a: i64, b: u32, c: usize, d: i16) from memplan_kernels::SIGNATURES;
        host sums: [u64; k] pinned;
        device w: [u64; k];
        stream s;
        for c in 0..k {
            on s {
                launch widths<<<1, 1>>>(w[c..c + 1], c as i64, (c + 1) as u32, (c + 2) as usize, (short_base + c) as i16);
            }
        }
        on s { copy w -> sums; }
    }
}

/// A module whose `u16` is `i16`: a hostile spelling of a kernel's
/// `short` parameter, whose counts must still be written as `i16`s.
mod aliased {
    #![allow(non_camel_case_types)]
    type u16 = i16;
    memplan::memplan! {
        pub plan Widths(k: usize, short_base: usize) {
            kernel widths(out: &out [u64; 1], a: i64, b: u32, c: usize, d: u16) from memplan_kernels::SIGNATURES;
            device w: [u64; k];
            stream s;
            for c in 0..k {
                on s {
                    launch widths<<<1, 1>>>(w[c..c + 1], c as i64, (c + 1) as u32, (c + 2) as usize, (short_base + c) as u16);
                }
            }
        }
    }
}

/// An `i32` for the kernel, through a call the plan's arithmetic cannot
/// follow.
fn narrow(count: i64) -> i32 {
    i32::try_from(count).unwrap_or(i32::MAX)
}

fn classes_run_as_their_cpp() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 3000;
    let a = Affine {
        scale: 2.0,
        offset: 0.5,
    };
    let mut plan = Affine4::new(&ctx, n, a)?;
    for (i, v) in plan.host_mut().h.iter_mut().enumerate() {
        let x = i as f32;
        *v = Float4 {
            x,
            y: -x,
            z: 1.0,
            w: 0.25,
        };
    }
    plan.run()?;
    let expected: Vec<Float4> = (0..n)
        .map(|i| {
            let x = i as f32;
            Float4 {
                x: x * 2.0 + 0.5,
                y: -x * 2.0 + 0.5,
                z: 2.5,
                w: 1.0,
            }
        })
        .collect();
    ensure!(
        plan.host().h == expected.as_slice(),
        "affine4 on float4 gave another result than the CPU's"
    );
    Ok(())
}

fn an_unsafe_kernel_without_a_contract_runs() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 1000;
    let mut plan = Uncontracted::new(&ctx, n)?;
    plan.run()?;
    same("uncontracted", plan.host().out, &vec![2.0; n])
}

/// `error` is `fault`'s, of `launch vadd`.
fn of_the_launch(error: &Error, fault: impl Fn(&Fault) -> bool) -> Result<(), Failed> {
    ensure!(
        error.operation() == "launch vadd" && fault(error.fault()),
        "expected the launch to be refused for its empty grid, got: {error}"
    );
    println!("{error}");
    Ok(())
}

fn an_empty_grid_given_a_range_to_write_is_refused() -> Result<(), Failed> {
    let ctx = context()?;
    let error = NoBlocks::new(&ctx, 100)
        .err()
        .ok_or("a launch of no blocks counted as writing 100 elements")?;
    of_the_launch(&error, |fault| {
        matches!(
            fault,
            Fault::EmptyGridWrites {
                param: Some("c"),
                elements: 100
            }
        )
    })?;

    let cap = 1000;
    let mut plan = GridOfRun::new(&ctx, cap)?;
    plan.run(cap)?;
    same(
        "a grid of the run's length",
        plan.host().out,
        &vec![3.0; cap],
    )?;
    let error = plan
        .run(0)
        .err()
        .ok_or("a run of no blocks counted as writing")?;
    of_the_launch(&error, |fault| {
        matches!(
            fault,
            Fault::EmptyGridWrites {
                param: Some("c"),
                elements: 1000
            }
        )
    })?;
    // The plan still runs after the refusal.
    plan.run(1)?;

    let mut plan = AllOfRun::new(&ctx, cap)?;
    plan.run(0)?;
    plan.run(10)?;
    same(
        "ten of the run's length",
        &plan.host().out[..10],
        &[3.0; 10],
    )
}

fn a_run_size_past_its_range_is_refused_at_run() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = RunCount::new(&ctx, 100, 10)?;
    plan.run(10)?;
    plan.run(0)?;
    let error = plan
        .run(11)
        .err()
        .ok_or("11 elements of a range of 10 ran")?;
    ensure!(
        error.operation() == "launch process_data"
            && matches!(
                error.fault(),
                Fault::Extent {
                    param: "data",
                    extent: 11,
                    len: 10
                }
            ),
        "expected the extent of `data` to be refused, got: {error}"
    );
    plan.run(3)?;
    Ok(())
}

fn a_short_range_is_refused_at_new() -> Result<(), Failed> {
    let ctx = context()?;
    Middle::new(&ctx, 1)?.run()?;
    let error = Middle::new(&ctx, 10)
        .err()
        .ok_or("10 elements of a range of 5 ran")?;
    ensure!(
        matches!(
            error.fault(),
            Fault::Extent {
                param: "c",
                extent: 10,
                len: 5
            }
        ),
        "expected the extent of `c` to be refused, got: {error}"
    );
    Ok(())
}

fn a_write_the_checks_cannot_follow_covers_its_argument() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 500;
    let mut plan = Counted::new(&ctx, n, n as i64)?;
    plan.run()?;
    same(
        "a measured write of all of `c`",
        plan.host().out,
        &vec![3.0; n],
    )?;
    let error = Counted::new(&ctx, n, 10)
        .err()
        .ok_or("a measured write of 10 of 500 elements counted as writing all")?;
    ensure!(
        matches!(
            error.fault(),
            Fault::MeasuredWriteShort {
                param: "c",
                extent: 10,
                len: 500
            }
        ),
        "expected the short measured write to be refused, got: {error}"
    );
    println!("{error}");
    Ok(())
}

fn counts_reach_the_kernel_in_each_parameters_own_type() -> Result<(), Failed> {
    let ctx = context()?;
    let k = 8;
    let mut plan = Widths::new(&ctx, k, 100)?;
    plan.run()?;
    let expected: Vec<u64> = (0..k as u64)
        .map(|c| c + (c + 1) + (c + 2) + (100 + c))
        .collect();
    same("widths", plan.host().sums, &expected)?;
    // 32767 fits a `short`; 32768 does not, whatever the spelling.
    Widths::new(&ctx, 1, 32767)?.run()?;
    for error in [
        Widths::new(&ctx, 2, 32767).err(),
        aliased::Widths::new(&ctx, 2, 32767).err(),
    ] {
        let error = error.ok_or("a count of 32768 was given to a `short`")?;
        ensure!(
            error.operation() == "launch widths"
                && error
                    .to_string()
                    .contains("`d` would be 32768, which does not fit its type (I16)"),
            "expected the launch to be refused for its count, got: {error}"
        );
        println!("{error}");
    }
    Ok(())
}

memplan! {
    /// Two kernels on two streams add their halves into one total with
    /// `atomicAdd`, with no order between them.
    plan Total(n: usize) {
        kernel sum_u32(data: &[u32; n], sum: &atomic [u64; 1], n: i32) from memplan_kernels::CHECKS;
        host   input: [u32; 2 * n] pinned, total: [u64; 1] pinned;
        device data: [u32; 2 * n], sum: [u64; 1];
        stream left, right;
        event  ready;
        on left {
            copy input -> data;
            fill sum with 0;
            record ready;
            launch sum_u32<<<blocks(n, 256), 256>>>(data[..n], sum, n as i32);
        }
        on right {
            wait ready;
            launch sum_u32<<<blocks(n, 256), 256>>>(data[n..], sum, n as i32);
        }
        sync all;
        copy sum -> total;
    }
}

fn atomic_updates_from_two_streams_add_up() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 1 << 20;
    let mut plan = Total::new(&ctx, n)?;
    let input: Vec<u32> = (0..2 * n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    plan.host_mut().input.copy_from_slice(&input);
    let expected: u64 = input.iter().map(|&x| u64::from(x)).sum();
    for run in 0..3 {
        plan.run()?;
        let total = plan.host().total[0];
        ensure!(total == expected, "run {run}: {total}, expected {expected}");
    }
    Ok(())
}
