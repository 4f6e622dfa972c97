//! Filling device memory with one value (`cuMemsetD8/16/32`).

use crate::copy::device_part;
use crate::driver::{self, DriverError};
use crate::error::Fault;
use crate::memory::{DeviceMemory, Element, byte_len};
use crate::stream::{LEGACY, Stream, synchronize_legacy};
use bytemuck::NoUninit;
use cust::sys::{CUdeviceptr, CUstream};
use std::ops::RangeBounds;

/// Sets `range` of a device buffer to `value`; returns when done.
pub fn fill<T, D>(dst: &D, range: impl RangeBounds<usize>, value: T) -> Result<usize, Fault>
where
    T: Element + NoUninit,
    D: DeviceMemory<T> + ?Sized,
{
    // SAFETY: memset of the legacy stream, waited for before we return.
    let bytes = unsafe { memset(dst, range, value, LEGACY)? };
    synchronize_legacy()?;
    Ok(bytes)
}

/// Queues a fill of `range` of a device buffer with `value` on `stream`.
///
/// # Safety
/// `dst` stays allocated until `stream` has finished the fill.
pub unsafe fn fill_async<T, D>(
    stream: &Stream,
    dst: &D,
    range: impl RangeBounds<usize>,
    value: T,
) -> Result<usize, Fault>
where
    T: Element + NoUninit,
    D: DeviceMemory<T> + ?Sized,
{
    // SAFETY: forwarded to the caller.
    unsafe { memset(dst, range, value, stream.raw()) }
}

/// # Safety
/// `dst` stays allocated until `stream` has finished the memset.
unsafe fn memset<T, D>(
    dst: &D,
    range: impl RangeBounds<usize>,
    value: T,
    stream: CUstream,
) -> Result<usize, Fault>
where
    T: Element + NoUninit,
    D: DeviceMemory<T> + ?Sized,
{
    let (to, len) = device_part(dst, range)?;
    let pattern = Pattern::of(bytemuck::bytes_of(&value)).ok_or(Fault::UnsupportedFill {
        element_size: size_of::<T>(),
    })?;
    let bytes = byte_len::<T>(len)?;
    // SAFETY: the pattern repeated over `bytes` covers exactly `range`,
    // which is inside the buffer; its lifetime is the caller's promise.
    unsafe { pattern.write(to.as_raw(), bytes, stream)? };
    Ok(bytes)
}

/// The smallest unit the driver can memset that repeats to an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pattern {
    Byte(u8),
    Half(u16),
    Word(u32),
}

impl Pattern {
    /// The pattern of one element's bytes, if the driver can repeat it.
    pub(crate) fn of(bytes: &[u8]) -> Option<Pattern> {
        let repeats = |unit: usize| {
            bytes.len().is_multiple_of(unit) && bytes.chunks(unit).all(|c| c == &bytes[..unit])
        };
        if bytes.is_empty() {
            None
        } else if repeats(1) {
            Some(Pattern::Byte(bytes[0]))
        } else if repeats(2) {
            Some(Pattern::Half(u16::from_ne_bytes([bytes[0], bytes[1]])))
        } else if repeats(4) {
            Some(Pattern::Word(u32::from_ne_bytes([
                bytes[0], bytes[1], bytes[2], bytes[3],
            ])))
        } else {
            None
        }
    }

    /// Bytes in one repetition of the pattern.
    pub(crate) fn unit(self) -> usize {
        match self {
            Pattern::Byte(_) => 1,
            Pattern::Half(_) => 2,
            Pattern::Word(_) => 4,
        }
    }

    /// The unit's bits, as a memset node holds them.
    pub(crate) fn bits(self) -> u32 {
        match self {
            Pattern::Byte(value) => u32::from(value),
            Pattern::Half(value) => u32::from(value),
            Pattern::Word(value) => value,
        }
    }

    /// Queues the pattern over `bytes` (a whole number of elements) from
    /// `to` on `stream`; no driver call for 0 bytes.
    ///
    /// # Safety
    /// The `bytes` from `to` are device memory that stays allocated until
    /// `stream` has finished the memset.
    pub(crate) unsafe fn write(
        self,
        to: CUdeviceptr,
        bytes: usize,
        stream: CUstream,
    ) -> Result<(), DriverError> {
        let count = bytes / self.unit();
        if count == 0 {
            return Ok(());
        }
        // SAFETY: forwarded to the caller.
        unsafe {
            match self {
                Pattern::Byte(value) => driver::memset_d8_async(to, value, count, stream),
                Pattern::Half(value) => driver::memset_d16_async(to, value, count, stream),
                Pattern::Word(value) => driver::memset_d32_async(to, value, count, stream),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_smallest_repeating_unit() {
        assert_eq!(Pattern::of(&0f64.to_ne_bytes()), Some(Pattern::Byte(0)));
        assert_eq!(Pattern::of(&[7u8]), Some(Pattern::Byte(7)));
        assert_eq!(
            Pattern::of(&0x0102u16.to_ne_bytes()),
            Some(Pattern::Half(0x0102))
        );
        assert_eq!(
            Pattern::of(&1.5f32.to_ne_bytes()),
            Some(Pattern::Word(1.5f32.to_bits()))
        );
        let pair = [
            1.5f32.to_bits().to_ne_bytes(),
            1.5f32.to_bits().to_ne_bytes(),
        ]
        .concat();
        assert_eq!(Pattern::of(&pair), Some(Pattern::Word(1.5f32.to_bits())));
    }

    #[test]
    fn refuses_values_the_driver_cannot_repeat() {
        assert_eq!(Pattern::of(&1.5f64.to_ne_bytes()), None);
        assert_eq!(Pattern::of(&[1, 2, 3]), None);
    }

    #[test]
    fn repeats_in_units_the_driver_writes() {
        assert_eq!(Pattern::Byte(0).unit(), 1);
        assert_eq!(Pattern::Half(1).unit(), 2);
        assert_eq!(Pattern::Word(1).unit(), 4);
    }
}
