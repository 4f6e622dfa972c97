//! What an operation of a plan is, and how its errors name it.

use crate::driver::DriverError;
use crate::error::{Error, Fault, Location, Result};

/// What kind of operation an op is, for reports and traces: the model's
/// `Op` without its operands, a copy told apart by its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// A copy from host memory to device memory.
    CopyHostToDevice,
    /// A copy from device memory to host memory.
    CopyDeviceToHost,
    /// A copy between device buffers, on one GPU or two.
    CopyDeviceToDevice,
    /// A copy between host buffers.
    CopyHostToHost,
    /// `fill`: sets every element of a buffer or range to one value.
    Fill,
    /// `launch`: a kernel launch.
    Launch,
    /// `record`: an event recorded on a stream.
    Record,
    /// `wait`: a stream waiting for an event.
    Wait,
    /// `sync`: the host waiting for a stream, or for all of them.
    Sync,
    /// A host step: the plan's Rust code, run by the host in program order.
    Host,
    /// `alloc`: a stream-ordered allocation.
    Alloc,
    /// `free`: a stream-ordered free.
    Free,
    /// One rank's part of an NCCL collective.
    Collective,
    /// A declaration: the buffer, stream, event or kernel `new` creates.
    Declaration,
}

/// An operation of a plan, as written, where errors and reports name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// The plan's name.
    pub plan: &'static str,
    /// The op as written, `copy dc -> c`.
    pub label: &'static str,
    /// What kind of op it is.
    pub kind: OpKind,
    /// The stream it runs on; `None` for synchronous ops and host steps.
    pub stream: Option<&'static str>,
    /// Which stream of a set (`lanes[2]`) it runs on, in a loop.
    pub element: Option<u16>,
    /// Where the op is written.
    pub location: Location,
}

impl OpInfo {
    /// An op `label` of plan `P` on `stream`, for the tests of what reports
    /// and traces make of ops.
    #[cfg(test)]
    pub(crate) const fn on_stream(
        label: &'static str,
        kind: OpKind,
        stream: &'static str,
    ) -> OpInfo {
        OpInfo {
            plan: "P",
            label,
            kind,
            stream: Some(stream),
            element: None,
            location: Location {
                file: "p.rs",
                line: 1,
                column: 1,
            },
        }
    }

    /// The lane reports put it on: `sync` for synchronous ops and host
    /// steps, the stream's name, `lanes[2]` for a stream of a set.
    pub fn lane(&self) -> String {
        match (self.stream, self.element) {
            (None, _) => "sync".to_owned(),
            (Some(stream), None) => stream.to_owned(),
            (Some(stream), Some(element)) => format!("{stream}[{element}]"),
        }
    }

    /// An error of this op.
    pub fn error(&self, fault: impl Into<Fault>) -> Error {
        Error::new(fault.into(), self.label, self.location).in_plan(self.plan)
    }
}

/// A failure that an op of a plan can take over.
pub trait IntoOpError {
    fn into_op_error(self, op: &OpInfo) -> Error;
}

impl IntoOpError for Fault {
    fn into_op_error(self, op: &OpInfo) -> Error {
        op.error(self)
    }
}

impl IntoOpError for DriverError {
    fn into_op_error(self, op: &OpInfo) -> Error {
        op.error(self)
    }
}

impl IntoOpError for Error {
    /// Keeps the runtime call that failed in the message.
    fn into_op_error(self, op: &OpInfo) -> Error {
        self.within(op.plan, op.label, op.location)
    }
}

/// Attaches a plan's op to a failure.
pub trait OpResultExt<T> {
    fn at_op(self, op: &OpInfo) -> Result<T>;
}

impl<T, E: IntoOpError> OpResultExt<T> for Result<T, E> {
    #[inline]
    fn at_op(self, op: &OpInfo) -> Result<T> {
        self.map_err(|error| error.into_op_error(op))
    }
}
