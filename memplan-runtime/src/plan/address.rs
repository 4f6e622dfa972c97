//! Where memory is: a buffer's base address, known when the plan is made
//! or only during a run, and which of its sides (host, device) exists.

/// Where a buffer's memory is: known when the plan is made, or only during
/// a run (a caller's slice, a stream-ordered allocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    Fixed(u64),
    /// Caller slice `i` of the run.
    Param(u16),
    /// Stream-ordered allocation `i`.
    Scratch(u16),
    /// A set placed one element on each GPU: element `e`'s address is
    /// the runner's element base `i + e`.
    Elements(u16),
}

/// Which GPU a buffer's device memory is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Home {
    /// Host memory, which every GPU of the plan reaches where it is
    /// mapped (pinned memory of a plan on several GPUs is portable).
    Host,
    Gpu(u16),
    /// A set placed one element on each GPU (`on gpu`): element `e` on GPU `e`.
    EachElement,
    /// Stream-ordered allocation `i`: on the GPU of its `alloc`'s stream.
    Scratch(u16),
}

/// An address: a base and a byte offset from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Addr {
    pub base: Base,
    pub offset: u64,
}

/// Where each buffer's memory is, by side.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    pub host: Option<Base>,
    pub device: Option<Base>,
    pub page_locked: bool,
    /// False for a caller's read-only slice.
    pub writable: bool,
    pub home: Home,
}
