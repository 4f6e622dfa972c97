//! Users' kernels on a GPU: declarations checked against the C++ run
//! (each linkage, template instances, every value width), a wrong
//! `unsafe kernel` declaration is caught at `new` by the driver's own
//! account of the compiled parameters, PTX from another tool loads and
//! runs, and extents that a launch cannot meet are refused at `new`.

use crate::data::same;
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::{Error, Fault, Image, memplan};

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "kernels::checked_kernels_of_each_linkage_run",
        checked_kernels_of_each_linkage_run,
    ),
    (
        "kernels::a_wrong_unsafe_declaration_fails_at_new",
        a_wrong_unsafe_declaration_fails_at_new,
    ),
    (
        "kernels::ptx_modules_load_and_run",
        ptx_modules_load_and_run,
    ),
    (
        "kernels::extents_are_tracked_and_checked_at_new",
        extents_are_tracked_and_checked_at_new,
    ),
];

/// PTX as another tool would hand it over: `data[i] += value` for `i < n`.
static ADD_VALUE: Image = Image::from_ptx(include_str!("add_value.ptx"));

memplan! {
    /// Every kernel of signatures.cu, as checked declarations.
    plan Linkages(n: usize) {
        kernel c_linkage(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SIGNATURES;
        kernel cpp_linkage(input: &[f64; n], output: &out [f64; n], n: u32) from memplan_kernels::SIGNATURES;
        kernel scale_f32(input: &[f32; n], output: &out [f32; n], factor: f32, n: i32)
            from memplan_kernels::SIGNATURES as "scaled<float>";
        kernel scale_i32(input: &[i32; n], output: &out [i32; n], factor: i32, n: i32)
            from memplan_kernels::SIGNATURES as "scaled<int>";
        kernel widths(out: &out [u64; 1], a: i64, b: u32, c: usize, d: i16) from memplan_kernels::SIGNATURES;

        host   floats: [f32; n] pinned, doubles: [f64; n] pinned, ints: [i32; n] pinned, sum: [u64; 1] pinned;
        device x: [f32; n], y: [f32; n], u: [f64; n], v: [f64; n], i: [i32; n], j: [i32; n], w: [u64; 1];
        fill x with 1.5;
        // An 8-byte 1.0 is no memset pattern: it comes from the host.
        copy doubles -> u;
        fill i with 7;
        fill w with 0;
        launch c_linkage<<<blocks(n, 256), 256>>>(x, y, n as i32);
        launch scale_f32<<<blocks(n, 256), 256>>>(y, x, 0.5, n as i32);
        launch cpp_linkage<<<blocks(n, 256), 256>>>(u, v, n as u32);
        launch scale_i32<<<blocks(n, 256), 256>>>(i, j, -3, n as i32);
        launch widths<<<1, 1>>>(w, -1, 2, n, 4);
        copy x -> floats;
        copy v -> doubles;
        copy j -> ints;
        copy w -> sum;
    }

    /// `n` declared 8 bytes wide where the C++ takes an `int`.
    plan Widened(n: usize) {
        unsafe kernel process_data(data: &mut [f32], n: i64) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        fill d with 0.0;
        launch process_data<<<blocks(n, 256), 256>>>(d, n as i64);
    }

    /// One parameter fewer than the C++ has.
    plan Short(n: usize) {
        unsafe kernel process_data(data: &mut [f32]) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        fill d with 0.0;
        launch process_data<<<blocks(n, 256), 256>>>(d);
    }

    /// The PTX kernel, declared as its text says.
    plan FromPtx(n: usize) {
        unsafe kernel add_value(data: &mut [f32; n], value: f32, n: i32) from ADD_VALUE;
        host   out: [f32; n] pinned;
        device d: [f32; n];
        fill d with 1.0;
        launch add_value<<<blocks(n, 128), 128>>>(d, 2.5, n as i32);
        copy d -> out;
    }

    /// The PTX kernel with `value` declared a `f64`: every parameter after
    /// it would be read from the wrong place.
    plan FromPtxWrong(n: usize) {
        unsafe kernel add_value(data: &mut [f32], value: f64, n: i32) from ADD_VALUE;
        device d: [f32; n];
        fill d with 1.0;
        launch add_value<<<blocks(n, 128), 128>>>(d, 2.5, n as i32);
    }

    /// The kernel adds one to the first half of `d` on stream `a` while a
    /// fill writes the second half on `b`: the extent says they do not
    /// meet.
    plan Halves(half: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   out: [f32; 2 * half] pinned;
        device d: [f32; 2 * half];
        stream a, b;
        event filled;
        on a {
            fill d[..half] with 1.0;
            launch process_data<<<blocks(half, 256), 256>>>(d, half as i32);
        }
        on b {
            fill d[half..] with 5.0;
            record filled;
        }
        on a {
            wait filled;
            copy d -> out;
        }
    }

    /// The example: `n` elements from the middle of `n`.
    plan Middle(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        fill d with 0.0;
        launch process_data<<<blocks(n, 256), 256>>>(d[n / 2..], n as i32);
    }

    /// The same extent through a value the arithmetic cannot follow:
    /// `new` computes it from what the kernel receives.
    plan MiddleMeasured(n: usize, count: i64) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        fill d with 0.0;
        launch process_data<<<blocks(n, 256), 256>>>(d[n / 2..], narrow(count));
    }

    /// `n as i32` of an `n` that does not fit: the kernel would see 2.
    plan Wrapped(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; 4];
        fill d with 0.0;
        launch process_data<<<1, 32>>>(d, n as i32);
    }
}

/// An `i32` for the kernel, through a call the plan's arithmetic cannot
/// follow.
fn narrow(count: i64) -> i32 {
    i32::try_from(count).unwrap_or(i32::MAX)
}

fn checked_kernels_of_each_linkage_run() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 1000;
    let mut plan = Linkages::new(&ctx, n)?;
    plan.host_mut().doubles.fill(1.0);
    plan.run()?;
    let host = plan.host();
    // 1.5 * 2 (extern "C"), then * 0.5 (scaled<float>).
    same("c_linkage then scaled<float>", host.floats, &vec![1.5; n])?;
    same("cpp_linkage", host.doubles, &vec![2.0; n])?;
    same("scaled<int>", host.ints, &vec![-21; n])?;
    // -1 + 2 + n + 4, as unsigned 64-bit.
    same("widths", host.sum, &[n as u64 + 5])
}

/// The error is the declaration's, and says how the parameters differ.
fn names_the_declaration(error: &Error, kernel: &str) -> Result<(), Failed> {
    ensure!(
        error.operation() == format!("kernel {kernel}")
            && matches!(error.fault(), Fault::KernelParameters { .. })
            && error.location().file.ends_with("kernels.rs"),
        "expected an error of the declaration of `{kernel}`, got: {error}"
    );
    Ok(())
}

fn a_wrong_unsafe_declaration_fails_at_new() -> Result<(), Failed> {
    let ctx = context()?;
    let widened = Widened::new(&ctx, 256).err().ok_or("a wrong width ran")?;
    names_the_declaration(&widened, "process_data")?;
    let short = Short::new(&ctx, 256)
        .err()
        .ok_or("a missing parameter ran")?;
    names_the_declaration(&short, "process_data")?;
    println!("{widened}\n{short}");
    Ok(())
}

fn ptx_modules_load_and_run() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 3000;
    let mut plan = FromPtx::new(&ctx, n)?;
    plan.run()?;
    same("add_value from PTX", plan.host().out, &vec![3.5; n])?;
    let wrong = FromPtxWrong::new(&ctx, n)
        .err()
        .ok_or("a wrong PTX declaration ran")?;
    names_the_declaration(&wrong, "add_value")
}

fn extents_are_tracked_and_checked_at_new() -> Result<(), Failed> {
    let ctx = context()?;
    let half = 5000;
    let mut plan = Halves::new(&ctx, half)?;
    plan.run()?;
    let mut expected = vec![2.0; half];
    expected.extend(vec![5.0; half]);
    same("two halves on two streams", plan.host().out, &expected)?;

    // One element from the middle of one is in bounds; 8 of 8 from the
    // middle are not.
    Middle::new(&ctx, 1)?.run()?;
    let error = Middle::new(&ctx, 8)
        .err()
        .ok_or("an extent past the buffer ran")?;
    ensure!(
        error.operation() == "launch process_data"
            && matches!(
                error.fault(),
                Fault::Extent {
                    param: "data",
                    extent: 8,
                    len: 4
                }
            ),
        "expected the extent of `data` to be refused, got: {error}"
    );
    // Measured from the arguments: 4 of the 4 from the middle of 8 fit; a
    // negative count is refused (the kernel's C arithmetic on negatives
    // is not memplan's to guess); 8 do not fit.
    MiddleMeasured::new(&ctx, 8, 4)?.run()?;
    let error = MiddleMeasured::new(&ctx, 8, -5)
        .err()
        .ok_or("a negative count named by an extent ran")?;
    ensure!(
        matches!(
            error.fault(),
            Fault::NegativeExtentValue {
                param: "data",
                position: 1,
                value: -5
            }
        ),
        "expected the negative count to be refused, got: {error}"
    );
    let error = MiddleMeasured::new(&ctx, 8, 8)
        .err()
        .ok_or("a measured extent past the buffer ran")?;
    ensure!(
        matches!(
            error.fault(),
            Fault::Extent {
                param: "data",
                extent: 8,
                len: 4
            }
        ),
        "expected the measured extent of `data` to be refused, got: {error}"
    );
    let error = Wrapped::new(&ctx, (1 << 32) + 2)
        .err()
        .ok_or("a wrapped extent ran")?;
    ensure!(
        matches!(
            error.fault(),
            Fault::ExtentArgument {
                param: "n",
                value: 2,
                ..
            }
        ),
        "expected the cast of `n` to be refused, got: {error}"
    );
    println!("{error}");
    Ok(())
}
