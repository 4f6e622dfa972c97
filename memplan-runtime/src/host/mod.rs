//! Host memory: page-locked buffers the driver allocates, and caller memory
//! the driver pins for a while. Pageable memory is any `[T]` or `Vec<T>`.

mod flags;
mod pinned;
mod registered;
pub(crate) mod registry;

pub use flags::HostAlloc;
pub use pinned::PinnedBuffer;
pub(crate) use pinned::mapped_device_ptr;
pub use registered::{Registered, RegisteredRef};
