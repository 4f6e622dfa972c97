//! The toolchain's smoke test, written against cust and its raw bindings
//! only: if this passes, the kernels compiled by nvcc load on the GPU, the
//! program linked against the stub loads the real driver, and the classic
//! add-one program gives the right answer.

use crate::harness::GpuTest;
use cust::memory::{DeviceBuffer, LockedBuffer};
use cust::module::Module;
use cust::sys as cu;
use libtest_mimic::Failed;
use std::ffi::c_void;
use std::ptr;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "smoke::add_one_on_a_non_blocking_stream",
        add_one_on_a_non_blocking_stream,
    ),
    (
        "smoke::every_kernel_module_loads",
        every_kernel_module_loads,
    ),
];

const N: usize = 1 << 20;
const BLOCK: u32 = 256;

fn add_one_on_a_non_blocking_stream() -> Result<(), Failed> {
    let _context = cust::quick_init()?;
    let module = Module::from_fatbin(memplan_kernels::ADD_ONE.bytes(), &[])?;
    let process_data = module.get_function("process_data")?;

    let input: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 1000.0).collect();
    let mut host = LockedBuffer::from_slice(&input)?;
    // SAFETY: the first copy below writes every element before anything reads one.
    let device = unsafe { DeviceBuffer::<f32>::uninitialized(N)? };
    let stream = NonBlockingStream::new()?;

    let bytes = N * size_of::<f32>();
    let mut device_ptr = device.as_device_ptr().as_raw();
    let mut n = N as i32;
    let mut args = [
        (&raw mut device_ptr).cast::<c_void>(),
        (&raw mut n).cast::<c_void>(),
    ];
    // SAFETY: both buffers hold N floats and live until after the stream is
    // synchronized; the kernel's C++ signature is (float*, int).
    unsafe {
        check(cu::cuMemcpyHtoDAsync_v2(
            device_ptr,
            host.as_ptr().cast(),
            bytes,
            stream.0,
        ))?;
        check(cu::cuLaunchKernel(
            process_data.to_raw(),
            N.div_ceil(BLOCK as usize) as u32,
            1,
            1,
            BLOCK,
            1,
            1,
            0,
            stream.0,
            args.as_mut_ptr(),
            ptr::null_mut(),
        ))?;
        check(cu::cuMemcpyDtoHAsync_v2(
            host.as_mut_ptr().cast(),
            device_ptr,
            bytes,
            stream.0,
        ))?;
        check(cu::cuStreamSynchronize(stream.0))?;
    }

    for (i, (&got, &x)) in host.iter().zip(&input).enumerate() {
        ensure!(got == x + 1.0, "element {i}: got {got}, expected {x} + 1");
    }
    Ok(())
}

fn every_kernel_module_loads() -> Result<(), Failed> {
    let _context = cust::quick_init()?;
    for (name, fatbin) in memplan_kernels::ALL_MODULES {
        Module::from_fatbin(fatbin.bytes(), &[]).map_err(|e| format!("module {name}: {e}"))?;
    }
    Ok(())
}

/// cust's `Stream::new` drops `CU_STREAM_NON_BLOCKING`, so make one directly.
struct NonBlockingStream(cu::CUstream);

impl NonBlockingStream {
    fn new() -> Result<Self, Failed> {
        let mut stream = ptr::null_mut();
        // SAFETY: writes the new stream's handle into `stream`.
        check(unsafe {
            cu::cuStreamCreate(
                &mut stream,
                cu::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
            )
        })?;
        Ok(Self(stream))
    }
}

impl Drop for NonBlockingStream {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuStreamCreate and is destroyed once.
        unsafe { cu::cuStreamDestroy_v2(self.0) };
    }
}

fn check(status: cu::CUresult) -> Result<(), Failed> {
    match status {
        cu::cudaError_enum::CUDA_SUCCESS => Ok(()),
        error => Err(format!("CUDA error {error:?}").into()),
    }
}
