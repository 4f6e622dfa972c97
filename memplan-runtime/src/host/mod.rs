//! Host memory: page-locked buffers the driver allocates, and caller memory
//! the driver pins for a while. Pageable memory is any `[T]` or `Vec<T>`.

mod pinned;
mod registered;
pub(crate) mod registry;

pub use memplan_model::HostAlloc;
pub use pinned::PinnedBuffer;
pub(crate) use pinned::mapped_device_ptr;
pub use registered::{Registered, RegisteredRef};

#[cfg(test)]
mod tests {
    use super::HostAlloc;
    use cust::sys::{
        CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_WRITECOMBINED,
    };

    /// The model writes the driver's flags as numbers (it knows no driver):
    /// they must be the driver's.
    #[test]
    fn host_alloc_flags_are_the_drivers() {
        assert_eq!(HostAlloc::PORTABLE.bits(), CU_MEMHOSTALLOC_PORTABLE);
        assert_eq!(HostAlloc::MAPPED.bits(), CU_MEMHOSTALLOC_DEVICEMAP);
        assert_eq!(
            HostAlloc::WRITE_COMBINED.bits(),
            CU_MEMHOSTALLOC_WRITECOMBINED
        );
    }
}
