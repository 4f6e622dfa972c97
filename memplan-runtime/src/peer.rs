//! Several GPUs of one host: whether one GPU can reach another's memory,
//! turning that on, and copies between their memories.
//!
//! A copy between two GPUs' memories works with or without peer access:
//! with it, the copy engines move the data over NVLink or PCIe directly;
//! without it, the driver stages the copy through host memory (slower, and
//! still correct). A kernel on one GPU can read another's memory only with
//! peer access on.

use crate::context::Context;
use crate::copy::{apart, between_gpus};
use crate::device::DeviceBuffer;
use crate::driver::{self, DriverError};
use crate::error::{Fault, Location, Result, ResultExt};
use crate::memory::Element;
use crate::stream::Stream;

impl Context {
    /// Whether this GPU can read and write `other`'s memory directly
    /// (`cuDeviceCanAccessPeer`); false for the same GPU.
    #[track_caller]
    pub fn can_access_peer(&self, other: &Context) -> Result<bool> {
        if self.device() == other.device() {
            return Ok(false);
        }
        driver::device_can_access_peer(self.device(), other.device())
            .at("cuDeviceCanAccessPeer", Location::caller())
    }

    /// Lets kernels and copies of this GPU reach `other`'s memory
    /// (`cuCtxEnablePeerAccess`, one direction; call it on both for both).
    /// Turning it on again is no error; where the hardware cannot, the
    /// error says so.
    #[track_caller]
    pub fn enable_peer_access(&self, other: &Context) -> Result<()> {
        let at = Location::caller();
        if !self.can_access_peer(other)? {
            let why = "these GPUs cannot reach each other's memory (cuDeviceCanAccessPeer)";
            return Err(Fault::Unsupported(why)).at("enable_peer_access", at);
        }
        self.bind_to_thread()?;
        // SAFETY: `other`'s context is retained; flags must be 0.
        match unsafe { driver::ctx_enable_peer_access(other.raw(), 0) } {
            Err(DriverError::PEER_ACCESS_ALREADY_ENABLED) => Ok(()),
            done => done.at("cuCtxEnablePeerAccess", at),
        }
    }
}

/// Copies all of `src` into `dst`, each on its own GPU (or both on one),
/// and waits for the copy (`cuMemcpyPeer`).
#[track_caller]
pub fn copy_peer<T: Element>(src: &DeviceBuffer<T>, dst: &mut DeviceBuffer<T>) -> Result<()> {
    let at = Location::caller();
    let bytes = same_length(src, dst).at("copy_peer", at)?;
    if bytes == 0 {
        return Ok(());
    }
    src.context().bind_to_thread()?;
    // SAFETY: both buffers hold `bytes` bytes in the contexts named, which
    // they keep retained; `&mut dst` keeps them apart. Without a stream,
    // `between_gpus` waits for the copy (which may return before it is
    // done), so that the buffers are free to use.
    unsafe {
        between_gpus(
            src.device_ptr().as_raw(),
            src.context(),
            dst.device_ptr().as_raw(),
            dst.context(),
            bytes,
            None,
        )
    }
    .at("cuMemcpyPeer", at)
}

/// Queues a copy of all of `src` into `dst`, each on its own GPU, on
/// `stream` (of either GPU) (`cuMemcpyAsync`, which a stream capture can
/// hold, unlike `cuMemcpyPeerAsync`).
///
/// One buffer given as both (which `&` allows here, unlike `&mut` in
/// [`copy_peer`]) is a [`Fault::OverlappingCopy`].
///
/// # Safety
/// Both buffers stay allocated, and nothing else touches `dst` or writes
/// `src`, until `stream` has finished the copy.
#[track_caller]
pub unsafe fn copy_peer_async<T: Element>(
    stream: &Stream,
    src: &DeviceBuffer<T>,
    dst: &DeviceBuffer<T>,
) -> Result<()> {
    let at = Location::caller();
    let bytes = same_length(src, dst).at("copy_peer_async", at)?;
    // Two buffers never share memory; one buffer given twice does.
    apart(src.device_ptr().as_raw(), dst.device_ptr().as_raw(), bytes).at("copy_peer_async", at)?;
    if bytes == 0 {
        return Ok(());
    }
    // `cuMemcpyAsync` queues in the current context, which must be the
    // stream's.
    stream.context().bind_to_thread()?;
    // SAFETY: forwarded to the caller; the contexts are retained.
    unsafe {
        between_gpus(
            src.device_ptr().as_raw(),
            src.context(),
            dst.device_ptr().as_raw(),
            dst.context(),
            bytes,
            Some(stream.raw()),
        )
    }
    .at("cuMemcpyAsync", at)
}

fn same_length<T: Element>(src: &DeviceBuffer<T>, dst: &DeviceBuffer<T>) -> Result<usize, Fault> {
    if src.len() != dst.len() {
        return Err(Fault::LengthMismatch {
            source: src.len(),
            destination: dst.len(),
        });
    }
    // The buffer's allocation already made this product.
    Ok(src.len() * size_of::<T>())
}
