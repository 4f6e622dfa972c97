//! Device memory: allocations that live as long as their handle
//! (`cuMemAlloc`), and stream-ordered ones (`cuMemAllocAsync`).

mod buffer;
mod stream_ordered;

pub use buffer::DeviceBuffer;
pub use stream_ordered::StreamOrderedBuffer;
