//! CUDA graphs: capturing a stream's work, instantiating and launching it,
//! and changing the parameters of an executable graph's nodes in place.

use super::error::{DriverError, check};
use super::ffi as cu;
pub(crate) use super::ffi::Memcpy3d;
use cust::sys::{
    CUDA_KERNEL_NODE_PARAMS, CUDA_MEMSET_NODE_PARAMS, CUcontext, CUgraph, CUgraphExec, CUgraphNode,
    CUstream, CUstreamCaptureMode,
};
use std::ffi::{CStr, c_uint, c_ulonglong};

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

/// Writes a graph's nodes, edges and every node's parameters to `path`
/// in Graphviz's DOT language (`cuGraphDebugDotPrint`, verbose).
///
/// # Safety
/// `graph` is live.
#[inline]
pub(crate) unsafe fn graph_debug_dot_print(graph: CUgraph, path: &CStr) -> Result<(), DriverError> {
    /// `CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE`: everything the driver can say.
    const VERBOSE: c_uint = 1;
    // SAFETY: a NUL-terminated path, read during the call; the graph is
    // the caller's promise.
    check(unsafe { cu::cuGraphDebugDotPrint(graph, path.as_ptr(), VERBOSE) })
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

/// The node the work last queued on `stream` became, while `stream` is
/// being captured: the one node the stream's next work would depend on
/// (`cuStreamGetCaptureInfo`); `None` where that is not one node.
///
/// # Safety
/// `stream` is live.
pub(crate) unsafe fn stream_capture_last_node(
    stream: CUstream,
) -> Result<Option<CUgraphNode>, DriverError> {
    let (mut status, mut id, mut graph) = (0, 0, std::ptr::null_mut());
    let (mut nodes, mut count) = (std::ptr::null(), 0usize);
    // SAFETY: writes the outputs; the stream is the caller's promise.
    check(unsafe {
        cu::cuStreamGetCaptureInfo_v2(
            stream,
            &mut status,
            &mut id,
            &mut graph,
            &mut nodes,
            &mut count,
        )
    })?;
    // CU_STREAM_CAPTURE_STATUS_ACTIVE; the array is the driver's, valid
    // until the stream's next capture call.
    if status != 1 || count != 1 || nodes.is_null() {
        return Ok(None);
    }
    // SAFETY: `count` (1) nodes at `nodes`.
    Ok(Some(unsafe { *nodes }))
}

/// Whether `node` is a kernel node (`cuGraphNodeGetType`).
///
/// # Safety
/// `node` is a live node.
pub(crate) unsafe fn graph_node_is_kernel(node: CUgraphNode) -> Result<bool, DriverError> {
    let mut kind = u32::MAX;
    // SAFETY: writes the type; the node is the caller's promise.
    check(unsafe { cu::cuGraphNodeGetType(node, &mut kind) })?;
    // CU_GRAPH_NODE_TYPE_KERNEL
    Ok(kind == 0)
}

/// Sets a kernel node's parameters in `exec` for its next launches
/// (`cuGraphExecKernelNodeSetParams`).
///
/// # Safety
/// `exec` and `node` (a kernel node of the graph `exec` was made from) are
/// live; the parameters' pointers are valid for the call, and the kernel
/// and what it reaches meet [`graph_launch`]'s promise at every later
/// launch.
pub(crate) unsafe fn graph_exec_kernel_node_set_params(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: &CUDA_KERNEL_NODE_PARAMS,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuGraphExecKernelNodeSetParams(exec, node, params) })
}

/// A copy node's parameters (`cuGraphMemcpyNodeGetParams`).
///
/// # Safety
/// `node` is a live copy node.
pub(crate) unsafe fn graph_memcpy_node_get_params(
    node: CUgraphNode,
) -> Result<Memcpy3d, DriverError> {
    let mut params = std::mem::MaybeUninit::<Memcpy3d>::zeroed();
    // SAFETY: writes the parameters; the node is the caller's promise.
    check(unsafe { cu::cuGraphMemcpyNodeGetParams(node, params.as_mut_ptr()) })?;
    // SAFETY: plain integers and pointers, every bit pattern valid.
    Ok(unsafe { params.assume_init() })
}

/// Sets a copy node's parameters in `exec` (`cuGraphExecMemcpyNodeSetParams`).
///
/// # Safety
/// As for [`graph_exec_kernel_node_set_params`], for a copy node, with
/// `context` the one of the stream it was captured on (for a copy between
/// two GPUs' memories, the GPU that queued it).
pub(crate) unsafe fn graph_exec_memcpy_node_set_params(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: &Memcpy3d,
    context: CUcontext,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuGraphExecMemcpyNodeSetParams(exec, node, params, context) })
}

/// A memset node's parameters (`cuGraphMemsetNodeGetParams`).
///
/// # Safety
/// `node` is a live memset node.
pub(crate) unsafe fn graph_memset_node_get_params(
    node: CUgraphNode,
) -> Result<CUDA_MEMSET_NODE_PARAMS, DriverError> {
    let mut params = std::mem::MaybeUninit::<CUDA_MEMSET_NODE_PARAMS>::zeroed();
    // SAFETY: writes the parameters; the node is the caller's promise.
    check(unsafe { cu::cuGraphMemsetNodeGetParams(node, params.as_mut_ptr()) })?;
    // SAFETY: plain integers, every bit pattern valid.
    Ok(unsafe { params.assume_init() })
}

/// Sets a memset node's parameters in `exec` (`cuGraphExecMemsetNodeSetParams`).
///
/// # Safety
/// As for [`graph_exec_memcpy_node_set_params`], for a memset node.
pub(crate) unsafe fn graph_exec_memset_node_set_params(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: &CUDA_MEMSET_NODE_PARAMS,
    context: CUcontext,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuGraphExecMemsetNodeSetParams(exec, node, params, context) })
}
