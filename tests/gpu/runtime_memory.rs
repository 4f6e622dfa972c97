//! memplan-runtime on a GPU: every memory kind carries known data there and
//! back, and kernels reach mapped and registered host memory directly.

use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::{
    Context, DeviceBuffer, HostAlloc, LaunchConfig, Module, PinnedBuffer, Registered, Stream,
    StreamOrderedBuffer, blocks, copy, fill, scope,
};

pub const TESTS: &[(&str, GpuTest)] = &[
    ("runtime::memory::pageable_round_trip", pageable_round_trip),
    (
        "runtime::memory::pinned_round_trip_on_a_stream",
        pinned_round_trip_on_a_stream,
    ),
    (
        "runtime::memory::write_combined_upload",
        write_combined_upload,
    ),
    (
        "runtime::memory::portable_pinned_round_trip",
        portable_pinned_round_trip,
    ),
    (
        "runtime::memory::kernel_reads_and_writes_mapped_memory",
        kernel_reads_and_writes_mapped_memory,
    ),
    (
        "runtime::memory::mapped_write_combined_portable_together",
        mapped_write_combined_portable_together,
    ),
    (
        "runtime::memory::registered_slice_round_trip",
        registered_slice_round_trip,
    ),
    (
        "runtime::memory::kernel_writes_through_a_registered_mapping",
        kernel_writes_through_a_registered_mapping,
    ),
    (
        "runtime::memory::stream_ordered_allocation",
        stream_ordered_allocation,
    ),
    ("runtime::memory::fill_and_zero", fill_and_zero),
    (
        "runtime::memory::ranges_move_the_right_elements",
        ranges_move_the_right_elements,
    ),
];

const N: usize = 1 << 20;
/// Written into outputs before a test, so unwritten elements show.
const POISON: f32 = -7777.0;

fn pageable_round_trip() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let device = DeviceBuffer::from_slice(&ctx, &data)?;
    same("pageable -> device -> pageable", &device.to_vec()?, &data)
}

fn pinned_round_trip_on_a_stream() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let input = PinnedBuffer::from_slice(&ctx, &data, HostAlloc::PINNED)?;
    let mut output = PinnedBuffer::from_slice(&ctx, &vec![POISON; N], HostAlloc::PINNED)?;
    let device = DeviceBuffer::<f32>::new(&ctx, N)?;
    let stream = Stream::new(&ctx)?;
    scope(|s| {
        s.copy(&stream, &input, &device)?;
        s.copy(&stream, &device, &mut output)
    })?;
    same("pinned -> device -> pinned", &output, &data)
}

fn write_combined_upload() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let mut upload = PinnedBuffer::<f32>::with_flags(&ctx, N, HostAlloc::WRITE_COMBINED)?;
    upload.copy_from_slice(&data); // the host only writes write-combined memory
    let device = DeviceBuffer::<f32>::new(&ctx, N)?;
    let mut check = PinnedBuffer::from_slice(&ctx, &vec![POISON; N], HostAlloc::PINNED)?;
    let stream = Stream::new(&ctx)?;
    scope(|s| {
        s.copy(&stream, &upload, &device)?;
        s.copy(&stream, &device, &mut check)
    })?;
    same("write-combined -> device -> pinned", &check, &data)
}

fn portable_pinned_round_trip() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let input = PinnedBuffer::from_slice(&ctx, &data, HostAlloc::PORTABLE)?;
    ensure!(
        input.flags().is_portable(),
        "flags lost: {:?}",
        input.flags()
    );
    let device = DeviceBuffer::<f32>::new(&ctx, N)?;
    copy::htod(&input, .., &device, ..)?;
    same("portable -> device", &device.to_vec()?, &data)
}

fn scale_by_two(ctx: &Context) -> Result<memplan::Kernel, Failed> {
    Ok(Module::from_image(ctx, &memplan_kernels::SCALE)?.kernel("scale_by_two")?)
}

fn kernel_reads_and_writes_mapped_memory() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let input = PinnedBuffer::from_slice(&ctx, &data, HostAlloc::MAPPED)?;
    let mut output = PinnedBuffer::from_slice(&ctx, &vec![POISON; N], HostAlloc::MAPPED)?;
    let (Some(from), Some(to)) = (input.device_ptr(), output.device_ptr()) else {
        return Err("mapped buffers without device pointers".into());
    };
    let kernel = scale_by_two(&ctx)?;
    let stream = Stream::new(&ctx)?;
    scope(|s| {
        let _output = s.lend(&mut output); // the host keeps off it until the scope ends
        // SAFETY: scale_by_two(const float*, float*, int) over N elements of
        // two mapped buffers that live past the scope.
        unsafe {
            s.launch(
                &stream,
                &kernel,
                LaunchConfig::new(blocks(N, 256), 256, 0),
                (from, to, N as i32),
            )
        }
    })?;
    let expected: Vec<f32> = data.iter().map(|x| 2.0 * x).collect();
    same("kernel over mapped memory", &output, &expected)
}

fn mapped_write_combined_portable_together() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let flags = HostAlloc::MAPPED | HostAlloc::WRITE_COMBINED | HostAlloc::PORTABLE;
    let mut input = PinnedBuffer::<f32>::with_flags(&ctx, N, flags)?;
    input.copy_from_slice(&data);
    let Some(from) = input.device_ptr() else {
        return Err("not mapped".into());
    };
    let device = DeviceBuffer::<f32>::new(&ctx, N)?;
    let kernel = scale_by_two(&ctx)?;
    let stream = Stream::new(&ctx)?;
    scope(|s| {
        let _input = s.lend(&mut input);
        // SAFETY: reads N floats of `input` (lent), writes N floats of `device`.
        unsafe {
            s.launch(
                &stream,
                &kernel,
                LaunchConfig::new(blocks(N, 256), 256, 0),
                (from, device.device_ptr(), N as i32),
            )
        }
    })?;
    let expected: Vec<f32> = data.iter().map(|x| 2.0 * x).collect();
    same(
        "kernel reading mapped write-combined memory",
        &device.to_vec()?,
        &expected,
    )
}

fn add_one(ctx: &Context) -> Result<memplan::Kernel, Failed> {
    Ok(Module::from_image(ctx, &memplan_kernels::ADD_ONE)?.kernel("process_data")?)
}

fn registered_slice_round_trip() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let mut samples = data.clone();
    let kernel = add_one(&ctx)?;
    let device = DeviceBuffer::<f32>::new(&ctx, N)?;
    let stream = Stream::new(&ctx)?;
    {
        let mut registered = Registered::new(&ctx, &mut samples)?;
        scope(|s| {
            let host = s.lend(&mut registered);
            s.copy(&stream, host, &device)?;
            // SAFETY: process_data(float*, int) over the N floats of `device`.
            unsafe {
                s.launch(
                    &stream,
                    &kernel,
                    LaunchConfig::new(blocks(N, 256), 256, 0),
                    (device.device_ptr(), N as i32),
                )?
            };
            s.copy(&stream, &device, host)
        })?;
    } // unregistered here; `samples` is a plain Vec again
    let expected: Vec<f32> = data.iter().map(|x| x + 1.0).collect();
    same(
        "registered -> device -> add one -> registered",
        &samples,
        &expected,
    )
}

fn kernel_writes_through_a_registered_mapping() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let mut samples = data.clone();
    let kernel = add_one(&ctx)?;
    let stream = Stream::new(&ctx)?;
    {
        let mut registered = Registered::mapped(&ctx, &mut samples)?;
        let Some(pointer) = registered.device_ptr() else {
            return Err("not mapped".into());
        };
        scope(|s| {
            let _host = s.lend(&mut registered);
            // SAFETY: process_data over the N floats of the lent registration.
            unsafe {
                s.launch(
                    &stream,
                    &kernel,
                    LaunchConfig::new(blocks(N, 256), 256, 0),
                    (pointer, N as i32),
                )
            }
        })?;
    }
    let expected: Vec<f32> = data.iter().map(|x| x + 1.0).collect();
    same("kernel writing a registered mapping", &samples, &expected)
}

fn stream_ordered_allocation() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let input = PinnedBuffer::from_slice(&ctx, &data, HostAlloc::PINNED)?;
    let mut output = PinnedBuffer::from_slice(&ctx, &vec![POISON; N], HostAlloc::PINNED)?;
    let kernel = add_one(&ctx)?;
    let (first, second) = (Stream::new(&ctx)?, Stream::new(&ctx)?);
    let allocated = memplan::Event::new(&ctx)?;
    let used = memplan::Event::new(&ctx)?;
    // SAFETY: the buffer is allocated on `first`, used on `second` only after
    // waiting for `allocated`, and freed on `first` after waiting for `used`;
    // the host buffers live past the final synchronization.
    unsafe {
        let device = StreamOrderedBuffer::<f32>::alloc_async(&first, N)?;
        allocated.record(&first)?;
        second.wait(&allocated)?;
        copy::htod_async(&second, &input, .., &device, ..)?;
        kernel.launch(
            &second,
            LaunchConfig::new(blocks(N, 256), 256, 0),
            (device.device_ptr(), N as i32),
        )?;
        copy::dtoh_async(&second, &device, .., &mut output, ..)?;
        used.record(&second)?;
        first.wait(&used)?;
        device.free_async(&first)?;
    }
    first.synchronize()?;
    let expected: Vec<f32> = data.iter().map(|x| x + 1.0).collect();
    same(
        "stream-ordered buffer across two streams",
        &output,
        &expected,
    )
}

fn fill_and_zero() -> Result<(), Failed> {
    let ctx = context()?;
    let zeroed = DeviceBuffer::<f32>::zeroed(&ctx, N)?;
    same("zeroed", &zeroed.to_vec()?, &vec![0.0; N])?;
    let device = DeviceBuffer::from_slice(&ctx, &floats(N))?;
    fill::fill(&device, .., 3.5f32)?;
    fill::fill(&device, N / 2.., -1.25f32)?;
    let mut expected = vec![3.5; N];
    expected[N / 2..].fill(-1.25);
    same("fill", &device.to_vec()?, &expected)?;
    let wide = DeviceBuffer::<f64>::new(&ctx, 16)?;
    fill::fill(&wide, .., 0.0f64)?;
    let refused = fill::fill(&wide, .., 1.5f64);
    ensure!(
        matches!(
            refused,
            Err(memplan::Fault::UnsupportedFill { element_size: 8 })
        ),
        "an 8-byte value the driver cannot memset was accepted: {refused:?}"
    );
    Ok(())
}

fn ranges_move_the_right_elements() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let device = DeviceBuffer::<f32>::new(&ctx, N)?;
    // Swap the halves on the way in, and back on the way out.
    copy::htod(&data, ..N / 2, &device, N / 2..)?;
    copy::htod(&data, N / 2.., &device, ..N / 2)?;
    let swapped = device.to_vec()?;
    same("first half", &swapped[N / 2..], &data[..N / 2])?;
    same("second half", &swapped[..N / 2], &data[N / 2..])?;
    let mut back = vec![POISON; N];
    copy::dtoh(&device, ..N / 2, back.as_mut_slice(), N / 2..)?;
    copy::dtoh(&device, N / 2.., back.as_mut_slice(), ..N / 2)?;
    same("round trip through ranges", &back, &data)?;
    let other = DeviceBuffer::<f32>::new(&ctx, N)?;
    copy::dtod(&device, .., &other, ..)?;
    same("device to device", &other.to_vec()?, &swapped)
}
