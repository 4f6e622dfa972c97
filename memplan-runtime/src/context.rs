//! The CUDA context: one GPU's primary context, retained for as long as any
//! handle or anything allocated in it lives.

use crate::driver::{self, DriverError};
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
        // `ordinal` is below the count.
        let device = driver::device_get(ordinal as i32).at("cuDeviceGet", at)?;
        // Released in `Drop`.
        let raw = driver::device_primary_ctx_retain(device).at("cuDevicePrimaryCtxRetain", at)?;
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
        unsafe { driver::ctx_set_current(self.0.raw) }.at("cuCtxSetCurrent", Location::caller())
    }

    /// Waits until all work in this context has finished.
    #[track_caller]
    pub fn synchronize(&self) -> Result<()> {
        let at = Location::caller();
        self.bind_to_thread()?;
        driver::ctx_synchronize().at("cuCtxSynchronize", at)
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
        driver::device_get_name(self.0.device).at("cuDeviceGetName", Location::caller())
    }

    /// The GPU's memory in bytes.
    #[track_caller]
    pub fn total_memory(&self) -> Result<usize> {
        driver::device_total_mem(self.0.device).at("cuDeviceTotalMem", Location::caller())
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
        self.bind_to_thread()?;
        driver::ctx_get_stream_priority_range()
            .at("cuCtxGetStreamPriorityRange", Location::caller())
    }

    fn attribute(&self, attribute: cust::sys::CUdevice_attribute, at: Location) -> Result<i32> {
        self.attribute_raw(attribute).at("cuDeviceGetAttribute", at)
    }

    /// One of the GPU's attributes (`cuDeviceGetAttribute`).
    pub(crate) fn attribute_raw(
        &self,
        attribute: cust::sys::CUdevice_attribute,
    ) -> Result<i32, DriverError> {
        driver::device_get_attribute(attribute, self.0.device)
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
        let _ = unsafe { driver::device_primary_ctx_release(self.device) };
    }
}

fn init() -> Result<(), Fault> {
    driver::init(0).map_err(Fault::Driver)
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
    let count = driver::device_get_count()?;
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
pub(crate) fn release_in(context: &Context, release: impl FnOnce() -> Result<(), DriverError>) {
    // SAFETY: the context is retained by the caller's handle.
    let pushed = unsafe { driver::ctx_push_current(context.0.raw) }.is_ok();
    let _ = release();
    if pushed {
        let _ = driver::ctx_pop_current();
    }
}
