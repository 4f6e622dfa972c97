//! The CUDA context: one GPU's primary context, retained for as long as any
//! handle or anything allocated in it lives.

use crate::driver::DriverError;
use crate::driver::check;
use crate::driver::cu;
use crate::error::{Fault, Location, Result, ResultExt};
use cust::sys::{CUcontext, CUdevice};
use std::sync::Arc;

/// A GPU's primary context. Cheap to clone: every buffer, stream and event
/// holds one, so the context outlives everything made in it.
///
/// CUDA binds a context to a thread. [`Context::new`] binds it to the
/// calling thread; call [`Context::bind_to_thread`] before using memplan
/// from another thread. (Plans do this themselves at the start of each run.)
///
/// ```no_run
/// # fn main() -> memplan_runtime::Result<()> {
/// let ctx = memplan_runtime::Context::new(0)?;
/// println!("{} with {} GiB", ctx.device_name()?, ctx.total_memory()? >> 30);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Context(Arc<Retained>);

/// The retained primary context; released when the last handle goes.
struct Retained {
    raw: CUcontext,
    device: CUdevice,
    ordinal: usize,
}

// SAFETY: a CUcontext handle may be used from any thread; the driver
// synchronizes access to the context itself.
unsafe impl Send for Retained {}
unsafe impl Sync for Retained {}

impl Context {
    /// Starts the driver, retains GPU `ordinal`'s primary context and makes
    /// it current on this thread.
    ///
    /// Without a GPU this fails with an error whose
    /// [`is_no_device`](crate::Error::is_no_device) is true.
    #[track_caller]
    pub fn new(ordinal: usize) -> Result<Context> {
        let at = Location::caller();
        init().at("cuInit", at)?;
        let count = device_count().at("cuDeviceGetCount", at)?;
        if ordinal >= count {
            return Err(Fault::NoDevice(format!(
                "asked for GPU {ordinal}, and the driver sees {count}"
            )))
            .at("Context::new", at);
        }
        let mut device = 0;
        // SAFETY: writes the device handle; `ordinal` is below the count.
        check(unsafe { cu::cuDeviceGet(&mut device, ordinal as i32) }).at("cuDeviceGet", at)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: writes the primary context's handle; released in `Drop`.
        check(unsafe { cu::cuDevicePrimaryCtxRetain(&mut raw, device) })
            .at("cuDevicePrimaryCtxRetain", at)?;
        let context = Context(Arc::new(Retained {
            raw,
            device,
            ordinal,
        }));
        context.bind_to_thread()?;
        Ok(context)
    }

    /// Why no GPU can be used on this machine, or `None` if GPU 0 can.
    /// Does not create a context.
    #[track_caller]
    pub fn missing_gpu() -> Option<String> {
        let at = Location::caller();
        match init()
            .at("cuInit", at)
            .and_then(|()| device_count().at("cuDeviceGetCount", at))
        {
            Ok(0) => Some("the NVIDIA driver reports no GPU".into()),
            Ok(_) => None,
            Err(error) => Some(describe_missing(&error)),
        }
    }

    /// Makes this context current on the calling thread.
    ///
    /// Synchronous copies and fills run on the current context's default
    /// stream: with several GPUs, bind the context of the memory first.
    #[track_caller]
    pub fn bind_to_thread(&self) -> Result<()> {
        // SAFETY: the context is retained for as long as `self` lives.
        check(unsafe { cu::cuCtxSetCurrent(self.0.raw) }).at("cuCtxSetCurrent", Location::caller())
    }

    /// Waits until all work in this context has finished.
    #[track_caller]
    pub fn synchronize(&self) -> Result<()> {
        let at = Location::caller();
        self.bind_to_thread()?;
        // SAFETY: no arguments; acts on the current context.
        check(unsafe { cu::cuCtxSynchronize() }).at("cuCtxSynchronize", at)
    }

    /// The driver's handle.
    pub(crate) fn raw(&self) -> CUcontext {
        self.0.raw
    }

    /// The GPU's ordinal, as passed to [`Context::new`].
    pub fn ordinal(&self) -> usize {
        self.0.ordinal
    }

    /// The GPU's name, `NVIDIA H200`.
    #[track_caller]
    pub fn device_name(&self) -> Result<String> {
        let mut name = [0 as std::ffi::c_char; 256];
        // SAFETY: the driver writes at most `name.len()` bytes, NUL-terminated.
        check(unsafe { cu::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, self.0.device) })
            .at("cuDeviceGetName", Location::caller())?;
        // SAFETY: NUL-terminated by the driver, inside the buffer.
        let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
        Ok(name.to_string_lossy().into_owned())
    }

    /// The GPU's memory in bytes.
    #[track_caller]
    pub fn total_memory(&self) -> Result<usize> {
        let mut bytes = 0;
        // SAFETY: writes the byte count.
        check(unsafe { cu::cuDeviceTotalMem_v2(&mut bytes, self.0.device) })
            .at("cuDeviceTotalMem", Location::caller())?;
        Ok(bytes)
    }

    /// Compute capability as (major, minor): (9, 0) for Hopper.
    #[track_caller]
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        use cust::sys::CUdevice_attribute_enum as Attribute;
        let at = Location::caller();
        let major = self.attribute(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, at)?;
        let minor = self.attribute(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, at)?;
        Ok((major, minor))
    }

    /// The stream priorities this GPU supports, as (lowest, highest). CUDA
    /// counts down: on an H200, (0, -5).
    #[track_caller]
    pub fn stream_priority_range(&self) -> Result<(i32, i32)> {
        let (mut lowest, mut highest) = (0, 0);
        self.bind_to_thread()?;
        // SAFETY: writes both bounds for the current context.
        check(unsafe { cu::cuCtxGetStreamPriorityRange(&mut lowest, &mut highest) })
            .at("cuCtxGetStreamPriorityRange", Location::caller())?;
        Ok((lowest, highest))
    }

    fn attribute(&self, attribute: cust::sys::CUdevice_attribute, at: Location) -> Result<i32> {
        self.attribute_raw(attribute).at("cuDeviceGetAttribute", at)
    }

    /// One of the GPU's attributes (`cuDeviceGetAttribute`).
    pub(crate) fn attribute_raw(
        &self,
        attribute: cust::sys::CUdevice_attribute,
    ) -> Result<i32, DriverError> {
        let mut value = 0;
        // SAFETY: writes the attribute's value.
        check(unsafe { cu::cuDeviceGetAttribute(&mut value, attribute, self.0.device) })?;
        Ok(value)
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("ordinal", &self.0.ordinal)
            .finish_non_exhaustive()
    }
}

impl Drop for Retained {
    fn drop(&mut self) {
        // SAFETY: balances the retain in `Context::new`; nothing made in this
        // context is alive, since each of those holds a handle. A drop
        // cannot report a failure.
        let _ = unsafe { cu::cuDevicePrimaryCtxRelease_v2(self.device) };
    }
}

fn init() -> Result<(), Fault> {
    // SAFETY: no pointers; idempotent.
    match unsafe { cu::cuInit(0) } {
        status if status.0 == 0 => Ok(()),
        error => Err(Fault::Driver(DriverError(error.0))),
    }
}

impl Context {
    /// How many GPUs the driver sees (0 without a driver or a GPU).
    pub fn count() -> usize {
        init().and_then(|()| device_count()).unwrap_or(0)
    }

    pub(crate) fn device(&self) -> CUdevice {
        self.0.device
    }
}

fn device_count() -> Result<usize, Fault> {
    let mut count = 0;
    // SAFETY: writes the count.
    check(unsafe { cu::cuDeviceGetCount(&mut count) })?;
    Ok(count.max(0) as usize)
}

fn describe_missing(error: &crate::Error) -> String {
    match error.driver_error() {
        Some(code) if code == DriverError::STUB_LIBRARY => {
            "no NVIDIA driver: this program loaded memplan's driver stub".into()
        }
        Some(code) if code == DriverError::NO_DEVICE => "the NVIDIA driver reports no GPU".into(),
        _ => format!("the CUDA driver failed to start: {}", error.fault()),
    }
}

/// Runs `release` (a driver call that frees a resource) with `context`
/// current, then makes current again what was current before. `Drop`
/// implementations, which may run on any thread, free resources this way;
/// a drop cannot report a failure, so the status is ignored.
pub(crate) fn release_in(context: &Context, release: impl FnOnce() -> crate::driver::Status) {
    // SAFETY: the context is retained by the caller's handle.
    let pushed = check(unsafe { cu::cuCtxPushCurrent_v2(context.0.raw) }).is_ok();
    let _ = release();
    if pushed {
        let mut popped = std::ptr::null_mut();
        // SAFETY: pops the context pushed above.
        let _ = unsafe { cu::cuCtxPopCurrent_v2(&mut popped) };
    }
}
