//! Launching a kernel early: programmatic dependent launch
//! (`cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_
//! SERIALIZATION`, CUDA 11.8, GPUs of compute capability 9.0 and newer).
//! The kernel may start while the kernel before it on its stream still
//! runs; it must wait for it (`griddepcontrol.wait`) before it touches
//! memory. cust_raw (CUDA 11) does not declare the call: it is found at
//! run time.

use super::error::{DriverError, check};
use super::ffi::Status;
use super::module::get_proc_address;
use cust::sys::{CUfunction, CUstream};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::OnceLock;

/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`.
const PROGRAMMATIC_STREAM_SERIALIZATION: c_uint = 6;

/// `CUlaunchAttribute`: the attribute's id, padding to 8 bytes, and its
/// value, a union of 64 bytes whose first `int` is this attribute's.
#[repr(C)]
struct LaunchAttribute {
    id: c_uint,
    pad: [u8; 4],
    value: AttributeValue,
}

/// `CUlaunchAttributeValue`: 64 bytes, aligned as the pointers some of
/// its members hold.
#[repr(C, align(8))]
struct AttributeValue {
    /// `programmaticStreamSerializationAllowed`, then the union's rest.
    allowed: c_int,
    rest: [u8; 60],
}

/// `CUlaunchConfig`.
#[repr(C)]
struct LaunchConfig {
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_bytes: c_uint,
    stream: CUstream,
    attributes: *mut LaunchAttribute,
    attribute_count: c_uint,
}

const _: () = {
    // The sizes and offsets of the CUDA 13.0 headers' structs.
    assert!(size_of::<LaunchAttribute>() == 72);
    assert!(size_of::<LaunchConfig>() == 56);
    assert!(std::mem::offset_of!(LaunchConfig, stream) == 32);
    assert!(std::mem::offset_of!(LaunchConfig, attribute_count) == 48);
};

/// `cuLaunchKernelEx`'s C signature.
type LaunchKernelEx = unsafe extern "C" fn(
    *const LaunchConfig,
    CUfunction,
    *mut *mut c_void,
    *mut *mut c_void,
) -> Status;

/// The driver's `cuLaunchKernelEx`, which launches a kernel early: found
/// at run time, as [`FuncGetParamInfo`](super::FuncGetParamInfo) is, so
/// that holding one says the driver can.
#[derive(Clone, Copy)]
pub(crate) struct LaunchEarly(LaunchKernelEx);

/// The driver's `cuLaunchKernelEx`, asked for once; `None` where the
/// driver predates it (kernels are then launched as any other).
pub(crate) fn launch_early() -> Option<LaunchEarly> {
    static FOUND: OnceLock<Option<LaunchEarly>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        // 11080 asks for the function as CUDA 11.8 introduced it.
        let function = get_proc_address(c"cuLaunchKernelEx", 11080)?;
        // SAFETY: the driver's `cuLaunchKernelEx`, whose C signature
        // `LaunchKernelEx` states.
        Some(LaunchEarly(unsafe {
            std::mem::transmute::<*mut c_void, LaunchKernelEx>(function.as_ptr())
        }))
    })
}

impl LaunchEarly {
    /// Launches `function` as [`launch_kernel`](super::launch_kernel)
    /// does, allowed to start before the work before it on `stream` has
    /// finished.
    ///
    /// # Safety
    /// As for `launch_kernel`, and the compiled code the GPU runs waits
    /// for the work before it (`griddepcontrol.wait`) before it touches
    /// memory.
    #[inline]
    pub(crate) unsafe fn launch(
        self,
        function: CUfunction,
        grid: [c_uint; 3],
        block: [c_uint; 3],
        shared_bytes: c_uint,
        stream: CUstream,
        arguments: *mut *mut c_void,
    ) -> Result<(), DriverError> {
        let mut attribute = LaunchAttribute {
            id: PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: AttributeValue {
                allowed: 1,
                rest: [0; 60],
            },
        };
        let config = LaunchConfig {
            grid,
            block,
            shared_bytes,
            stream,
            attributes: &mut attribute,
            attribute_count: 1,
        };
        // SAFETY: the config and its one attribute live during the call;
        // the rest is forwarded to the caller.
        check(unsafe { (self.0)(&config, function, arguments, std::ptr::null_mut()) })
    }
}
