//! The options of a page-locked host allocation (`cuMemHostAlloc`).

use std::ops::BitOr;

/// How a pinned buffer is allocated. Combine with `|`:
///
/// ```
/// use memplan_model::HostAlloc;
/// let flags = HostAlloc::MAPPED | HostAlloc::WRITE_COMBINED;
/// assert!(flags.is_mapped() && flags.is_write_combined() && !flags.is_portable());
/// ```
///
/// The bits are the driver's `CU_MEMHOSTALLOC_*` flags, which are part of
/// CUDA's ABI (the runtime tests them against its bindings).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HostAlloc(u32);

impl HostAlloc {
    /// Plain page-locked memory (`cuMemAllocHost`).
    pub const PINNED: Self = Self(0);
    /// Pinned for every CUDA context, not only the one that allocated it
    /// (`CU_MEMHOSTALLOC_PORTABLE`).
    pub const PORTABLE: Self = Self(0x01);
    /// Mapped into the device's address space: kernels read and write it
    /// directly over the bus ("zero-copy"; `CU_MEMHOSTALLOC_DEVICEMAP`).
    pub const MAPPED: Self = Self(0x02);
    /// Write-combined: faster for the host to write and the device to read,
    /// but host reads are uncached and very slow. For upload buffers only
    /// (`CU_MEMHOSTALLOC_WRITECOMBINED`).
    pub const WRITE_COMBINED: Self = Self(0x04);

    /// These flags and `other`'s: `|`, usable in constants.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// The flags as the driver takes them (`CU_MEMHOSTALLOC_*`).
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every flag of `other` is among these.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the memory is mapped into the device's address space
    /// (`MAPPED`).
    pub const fn is_mapped(self) -> bool {
        self.contains(Self::MAPPED)
    }

    /// Whether the memory is write-combined (`WRITE_COMBINED`).
    pub const fn is_write_combined(self) -> bool {
        self.contains(Self::WRITE_COMBINED)
    }

    /// Whether the memory is pinned for every context (`PORTABLE`).
    pub const fn is_portable(self) -> bool {
        self.contains(Self::PORTABLE)
    }
}

impl BitOr for HostAlloc {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        self.with(other)
    }
}
