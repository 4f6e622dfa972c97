//! The bridge to the driver: the calls ([`cu`]) and their statuses
//! ([`check`]).

pub(crate) mod ffi;

/// The driver functions memplan calls; see `ffi.rs` for why they are not
/// cust_raw's own declarations.
pub(crate) use ffi as cu;
pub use ffi::Status;

use crate::error::{DriverError, Fault};

/// `Ok` for `CUDA_SUCCESS`, the code otherwise.
#[inline]
pub fn check(status: Status) -> Result<(), DriverError> {
    match status.0 {
        0 => Ok(()),
        code => Err(DriverError(code)),
    }
}

/// Bytes in `len` elements of `T`, or a fault if that overflows.
#[inline]
pub fn byte_len<T>(len: usize) -> Result<usize, Fault> {
    len.checked_mul(size_of::<T>()).ok_or(Fault::SizeOverflow {
        len,
        element_size: size_of::<T>(),
    })
}
