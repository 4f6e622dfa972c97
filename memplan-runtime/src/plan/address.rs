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
}
