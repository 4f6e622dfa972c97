//! memplan-runtime on a GPU: failures come back as errors that name the
//! operation and where it was written, and leave nothing allocated (the
//! gpu-bundle runs these under `compute-sanitizer --leak-check full`).

use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::{
    DeviceBuffer, DriverError, Fault, LaunchConfig, Module, PinnedBuffer, Stream, copy, scope,
};

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "runtime::errors::an_invalid_launch_names_the_operation",
        an_invalid_launch_names_the_operation,
    ),
    (
        "runtime::errors::an_impossible_allocation_fails_cleanly",
        an_impossible_allocation_fails_cleanly,
    ),
    (
        "runtime::errors::ranges_outside_a_buffer_are_errors",
        ranges_outside_a_buffer_are_errors,
    ),
    (
        "runtime::errors::a_buffer_copied_onto_itself_is_refused",
        a_buffer_copied_onto_itself_is_refused,
    ),
    (
        "runtime::errors::a_missing_kernel_is_named",
        a_missing_kernel_is_named,
    ),
];

fn an_invalid_launch_names_the_operation() -> Result<(), Failed> {
    let ctx = context()?;
    let kernel = Module::from_image(&ctx, &memplan_kernels::ADD_ONE)?.kernel("process_data")?;
    let device = DeviceBuffer::<f32>::new(&ctx, 1024)?;
    let stream = Stream::new(&ctx)?;
    let too_many_threads = LaunchConfig::new(1, 4096, 0); // the limit is 1024 per block
    let result = scope(|s| {
        // SAFETY: process_data over 1024 floats of `device`; the launch is refused anyway.
        unsafe {
            s.launch(
                &stream,
                &kernel,
                too_many_threads,
                (device.device_ptr(), 1024i32),
            )
        }
    });
    let error = result
        .err()
        .ok_or("a launch of 4096 threads per block was accepted")?;
    ensure!(
        error.operation() == "Scope::launch",
        "operation: {}",
        error.operation()
    );
    ensure!(
        error.location().file.ends_with("runtime_errors.rs"),
        "location: {}",
        error.location()
    );
    ensure!(
        error.driver_error() == Some(DriverError::INVALID_VALUE),
        "driver error: {error}"
    );
    ensure!(
        error.to_string().contains("CUDA_ERROR_INVALID_VALUE"),
        "message: {error}"
    );
    // The context is still usable.
    device.to_vec()?;
    Ok(())
}

fn an_impossible_allocation_fails_cleanly() -> Result<(), Failed> {
    let ctx = context()?;
    let tebibyte = 1usize << 40;
    let error = DeviceBuffer::<u8>::new(&ctx, tebibyte)
        .err()
        .ok_or("1 TiB of device memory was allocated")?;
    ensure!(
        error.operation() == "cuMemAlloc",
        "operation: {}",
        error.operation()
    );
    ensure!(
        error.driver_error() == Some(DriverError::OUT_OF_MEMORY),
        "driver error: {error}"
    );
    ensure!(
        error.location().file.ends_with("runtime_errors.rs"),
        "location: {}",
        error.location()
    );
    let pinned = PinnedBuffer::<u8>::new(&ctx, tebibyte);
    ensure!(pinned.is_err(), "1 TiB of pinned host memory was allocated");
    // Smaller allocations still work afterwards.
    DeviceBuffer::<u8>::new(&ctx, 1 << 20)?;
    Ok(())
}

fn ranges_outside_a_buffer_are_errors() -> Result<(), Failed> {
    let ctx = context()?;
    let device = DeviceBuffer::<f32>::new(&ctx, 16)?;
    let host = vec![1.0f32; 16];
    let outside = copy::htod(&host, 8..20, &device, 0..12);
    ensure!(
        outside
            == Err(Fault::OutOfBounds {
                start: 8,
                end: 20,
                len: 16
            }),
        "copy from past the end: {outside:?}"
    );
    let mismatched = copy::htod(&host, ..8, &device, ..);
    ensure!(
        mismatched
            == Err(Fault::LengthMismatch {
                source: 8,
                destination: 16
            }),
        "copy between different lengths: {mismatched:?}"
    );
    Ok(())
}

fn a_buffer_copied_onto_itself_is_refused() -> Result<(), Failed> {
    let ctx = context()?;
    let stream = Stream::new(&ctx)?;
    let buffer = DeviceBuffer::<f32>::new(&ctx, 16)?;
    // SAFETY: the buffer outlives the stream's work, waited for below.
    let onto_itself = unsafe { memplan::copy_peer_async(&stream, &buffer, &buffer) };
    stream.synchronize()?;
    let error = onto_itself.err().ok_or("a buffer was copied onto itself")?;
    ensure!(*error.fault() == Fault::OverlappingCopy, "error: {error}");
    // SAFETY: as above.
    let whole = unsafe { copy::dtod_async(&stream, &buffer, .., &buffer, ..) };
    stream.synchronize()?;
    ensure!(
        whole == Err(Fault::OverlappingCopy),
        "dtod_async: {whole:?}"
    );
    Ok(())
}

fn a_missing_kernel_is_named() -> Result<(), Failed> {
    let ctx = context()?;
    let module = Module::from_image(&ctx, &memplan_kernels::ADD_ONE)?;
    let error = module
        .kernel("no_such_kernel")
        .err()
        .ok_or("found a kernel that does not exist")?;
    ensure!(
        matches!(error.fault(), Fault::KernelNotFound(name) if name == "no_such_kernel"),
        "error: {error}"
    );
    Ok(())
}
