//! The bridge to the driver: every `cust::sys` call's status goes through
//! [`check`].
//!
//! A note on soundness: cust_raw declares `CUresult` as a Rust enum made from
//! CUDA 11's headers. A newer driver can return a code that enum lacks, which
//! Rust does not allow for an enum. The calls memplan makes return codes that
//! exist in CUDA 11 (the driver adds codes for features we do not use), and
//! the driver stub returns `CUDA_ERROR_STUB_LIBRARY`, which the enum has.

use crate::error::{DriverError, Fault};
use cust::sys::{CUresult, cudaError_enum};

/// `Ok` for `CUDA_SUCCESS`, the code otherwise.
#[inline]
pub fn check(status: CUresult) -> Result<(), DriverError> {
    match status {
        cudaError_enum::CUDA_SUCCESS => Ok(()),
        error => Err(DriverError(error)),
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
