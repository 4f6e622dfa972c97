//! The driver's statuses as errors: [`check`] turns a [`Status`] into a
//! `Result`, and [`DriverError`] names and describes any code.

use super::ffi::{self as cu, Status};
use std::ffi::CStr;
use std::fmt;

/// `Ok` for `CUDA_SUCCESS`, the code otherwise.
#[inline]
pub(super) fn check(status: Status) -> Result<(), DriverError> {
    match status.0 {
        0 => Ok(()),
        code => Err(DriverError(code)),
    }
}

/// An error code the CUDA driver returned (a `CUresult` other than
/// `CUDA_SUCCESS`), whatever the driver's version.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DriverError(pub u32);

impl DriverError {
    /// `CUDA_ERROR_INVALID_VALUE`: an argument of the call is out of its
    /// range.
    pub const INVALID_VALUE: Self = Self(1);
    /// `CUDA_ERROR_OUT_OF_MEMORY`: an allocation could not be satisfied.
    pub const OUT_OF_MEMORY: Self = Self(2);
    /// `CUDA_ERROR_NOT_INITIALIZED`: `cuInit` has not succeeded.
    pub const NOT_INITIALIZED: Self = Self(3);
    /// `CUDA_ERROR_STUB_LIBRARY`: the program loaded a stub of libcuda, not a
    /// driver.
    pub const STUB_LIBRARY: Self = Self(34);
    /// `CUDA_ERROR_NO_DEVICE`: the driver sees no CUDA device.
    pub const NO_DEVICE: Self = Self(100);
    /// `CUDA_ERROR_NOT_FOUND`: a named symbol (a kernel) is not in the module.
    pub const NOT_FOUND: Self = Self(500);
    /// `CUDA_ERROR_NOT_READY`: queued work has not finished yet; a query's
    /// answer, not a failure.
    pub const NOT_READY: Self = Self(600);
    /// `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`: peer access between the two
    /// contexts is on already.
    pub const PEER_ACCESS_ALREADY_ENABLED: Self = Self(704);
    /// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`: the host range is
    /// registered already.
    pub const HOST_MEMORY_ALREADY_REGISTERED: Self = Self(712);
    /// `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`: a capture ended by an error
    /// during it, which may be another thread's (a context synchronized
    /// while the capture lasted).
    pub const STREAM_CAPTURE_INVALIDATED: Self = Self(901);

    /// The code's name, `CUDA_ERROR_OUT_OF_MEMORY`: the driver's, or (when
    /// there is no driver to ask) memplan's own for common codes.
    pub fn name(self) -> String {
        if let Some(name) = driver_string(cu::cuGetErrorName, self.0) {
            return name;
        }
        match known_name(self.0) {
            Some(name) => name.to_owned(),
            None => format!("CUDA error {}", self.0),
        }
    }

    /// The driver's own description, when the driver can give one.
    pub fn description(self) -> Option<String> {
        driver_string(cu::cuGetErrorString, self.0)
    }
}

/// A static string the driver gives for an error code.
fn driver_string(
    function: unsafe extern "C" fn(u32, *mut *const std::ffi::c_char) -> Status,
    code: u32,
) -> Option<String> {
    let mut text = std::ptr::null();
    // SAFETY: on success the driver points `text` at a static C string.
    let status = unsafe { function(code, &mut text) };
    if check(status).is_err() || text.is_null() {
        return None;
    }
    // SAFETY: checked non-null above; the string is static and NUL-terminated.
    Some(
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Names of the codes memplan's own messages and tests meet, for when no
/// driver can be asked (the driver stub answers every call with 34).
fn known_name(code: u32) -> Option<&'static str> {
    Some(match code {
        1 => "CUDA_ERROR_INVALID_VALUE",
        2 => "CUDA_ERROR_OUT_OF_MEMORY",
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        34 => "CUDA_ERROR_STUB_LIBRARY",
        100 => "CUDA_ERROR_NO_DEVICE",
        500 => "CUDA_ERROR_NOT_FOUND",
        600 => "CUDA_ERROR_NOT_READY",
        704 => "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
        712 => "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        _ => return None,
    })
}

impl fmt::Debug for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.description() {
            Some(description) => write!(f, "{} ({description})", self.name()),
            None => write!(f, "{}", self.name()),
        }
    }
}
