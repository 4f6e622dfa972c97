//! CUDA graphs: capturing a stream's work, instantiating and launching it.

use super::error::{DriverError, check};
use super::ffi as cu;
use cust::sys::{CUgraph, CUgraphExec, CUstream, CUstreamCaptureMode};
use std::ffi::c_ulonglong;

/// Begins capturing the work queued on `stream` into a graph
/// (`cuStreamBeginCapture`).
///
/// # Safety
/// `stream` is live until [`stream_end_capture`] ends the capture.
#[inline]
pub(crate) unsafe fn stream_begin_capture(
    stream: CUstream,
    mode: CUstreamCaptureMode,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuStreamBeginCapture_v2(stream, mode) })
}

/// Ends the capture `stream` began, and returns the graph captured
/// (`cuStreamEndCapture`).
///
/// # Safety
/// `stream` is live and capturing.
#[inline]
pub(crate) unsafe fn stream_end_capture(stream: CUstream) -> Result<CUgraph, DriverError> {
    let mut graph = std::ptr::null_mut();
    // SAFETY: writes the graph; the stream is the caller's promise.
    check(unsafe { cu::cuStreamEndCapture(stream, &mut graph) })?;
    Ok(graph)
}

/// An executable graph made from `graph` (`cuGraphInstantiateWithFlags`).
///
/// # Safety
/// `graph` is live.
#[inline]
pub(crate) unsafe fn graph_instantiate_with_flags(
    graph: CUgraph,
    flags: c_ulonglong,
) -> Result<CUgraphExec, DriverError> {
    let mut exec = std::ptr::null_mut();
    // SAFETY: writes the executable graph; `graph` is the caller's promise.
    check(unsafe { cu::cuGraphInstantiateWithFlags(&mut exec, graph, flags) })?;
    Ok(exec)
}

/// Queues one replay of `exec` on `stream` (`cuGraphLaunch`).
///
/// # Safety
/// `exec` and `stream` are live; the memory the graph uses stays allocated,
/// and the host off it, until `stream` has finished the replay.
#[inline]
pub(crate) unsafe fn graph_launch(exec: CUgraphExec, stream: CUstream) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuGraphLaunch(exec, stream) })
}

/// Destroys a graph (`cuGraphDestroy`).
///
/// # Safety
/// `graph` is live and destroyed once, never used again.
#[inline]
pub(crate) unsafe fn graph_destroy(graph: CUgraph) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuGraphDestroy(graph) })
}

/// Destroys an executable graph (`cuGraphExecDestroy`); one still running
/// is freed by the driver when it finishes.
///
/// # Safety
/// `exec` is live and destroyed once, never used again.
#[inline]
pub(crate) unsafe fn graph_exec_destroy(exec: CUgraphExec) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuGraphExecDestroy(exec) })
}
