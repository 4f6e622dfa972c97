//! CUDA graphs: record queued work once, replay it with one launch.

use crate::context::{Context, release_in};
use crate::driver::{self, DriverError};
use crate::error::{Fault, Location, Result, ResultExt};
use crate::event::Event;
use crate::stream::Stream;
use cust::sys::{CUgraph, CUgraphExec, CUstream, CUstreamCaptureMode_enum};
use std::ffi::CString;
use std::path::Path;

/// `CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY` (CUDA 11.7): a graph's
/// kernels run at the priority of the stream they were captured from.
const CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY: u64 = 8;

/// An instantiated CUDA graph: work captured from streams, replayed with a
/// single launch (one driver call instead of one per operation).
pub struct Graph {
    graph: CUgraph,
    exec: CUgraphExec,
    context: Context,
}

// SAFETY: graph handles may be used from any thread of the process, one
// thread at a time: CUDA does not synchronize calls on one graph, so a
// `Graph` is not `Sync` (two threads could launch it at once through `&`).
unsafe impl Send for Graph {}

impl Graph {
    /// Captures the work that `record` queues on `streams` and instantiates
    /// it; see [`Capture`]. Nothing runs while capturing.
    ///
    /// # Safety
    /// Every buffer the captured work touches stays allocated until the last
    /// launch of the graph has finished: the graph keeps their addresses, not
    /// the buffers (and a graph dropped while running is freed only when it
    /// finishes).
    #[track_caller]
    pub unsafe fn capture(
        streams: &[&Stream],
        record: impl FnOnce() -> Result<()>,
    ) -> Result<Graph> {
        // SAFETY: the streams are borrowed past `end`; buffers are the
        // caller's promise.
        let capture = unsafe { Capture::begin(streams)? };
        capture.end(record())
    }

    /// Queues one replay of the graph on `stream`.
    ///
    /// # Safety
    /// The host does not touch the memory the graph uses until `stream` has
    /// finished the replay.
    #[track_caller]
    pub unsafe fn launch(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live handles; memory is the caller's promise.
        unsafe { driver::graph_launch(self.exec, stream.raw()) }
            .at("cuGraphLaunch", Location::caller())
    }
}

impl Graph {
    /// Writes the captured graph to `path` in Graphviz's DOT language,
    /// every node with its parameters (`cuGraphDebugDotPrint`): what was
    /// captured, to read or to compare with another graph.
    #[track_caller]
    pub fn write_dot(&self, path: &Path) -> Result<()> {
        let at = Location::caller();
        let path = path
            .to_str()
            .and_then(|path| CString::new(path).ok())
            .ok_or(Fault::Unsupported(
                "a DOT file's path must be UTF-8 without NUL bytes",
            ))
            .at("cuGraphDebugDotPrint", at)?;
        // SAFETY: a live graph, held by `self`.
        unsafe { driver::graph_debug_dot_print(self.graph, &path) }.at("cuGraphDebugDotPrint", at)
    }

    /// The graph captured and the executable graph made from it.
    pub(crate) fn handles(&self) -> (CUgraph, CUgraphExec) {
        (self.graph, self.exec)
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: made by `Capture::end`, destroyed once each. An executable
        // graph still running is freed by the driver when it finishes.
        release_in(&self.context, || unsafe {
            driver::graph_exec_destroy(self.exec)
        });
        release_in(&self.context, || unsafe {
            driver::graph_destroy(self.graph)
        });
    }
}

/// How many times a capture that another thread invalidated is tried.
const CAPTURE_TRIES: usize = 3;

/// `capture`, tried again (up to [`CAPTURE_TRIES`] times in all) when the
/// capture was invalidated: another thread synchronizing the context
/// (`cuCtxSynchronize`) ends every capture in it, through no fault of this
/// one's.
pub(crate) fn tried_again_if_invalidated<T>(mut capture: impl FnMut() -> Result<T>) -> Result<T> {
    let mut tries = 1;
    loop {
        match capture() {
            Err(error)
                if error.driver_error() == Some(DriverError::STREAM_CAPTURE_INVALIDATED)
                    && tries < CAPTURE_TRIES =>
            {
                tries += 1;
            }
            captured => return captured,
        }
    }
}

/// A capture in progress: work queued on its streams is recorded into a
/// graph instead of running. The first stream begins the capture; the
/// others join it through an event and are joined back at the end, since a
/// capture must end on the stream that began it. The streams may be of
/// several GPUs: the graph then holds each GPU's work, launched on the
/// first stream (each join event is of its stream's GPU, as
/// `cuEventRecord` requires).
pub struct Capture {
    origin: CUstream,
    others: Vec<CUstream>,
    /// Recorded on each other stream and waited for by the origin at the end.
    joins: Vec<Event>,
    /// Kept alive until the capture ends.
    _fork: Event,
    context: Context,
    active: bool,
}

impl Capture {
    /// Waits for `streams` (at least one), then begins capturing them.
    ///
    /// Waiting first matters: during a capture a stream cannot be waited
    /// for, so work queued before it (by a scope or a plan) must be done
    /// before it starts.
    ///
    /// # Safety
    /// The streams outlive the capture, no other thread queues work on them
    /// while it lasts, and every buffer the captured work touches stays
    /// allocated until the last launch of the graph made from it has
    /// finished.
    #[track_caller]
    pub unsafe fn begin(streams: &[&Stream]) -> Result<Capture> {
        let at = Location::caller();
        let Some((origin, others)) = streams.split_first() else {
            return Err(Fault::Unsupported("a capture needs at least one stream"))
                .at("Capture::begin", at);
        };
        let context = origin.context().clone();
        for stream in streams {
            stream.synchronize()?;
        }
        let joins = others
            .iter()
            .map(|stream| Event::new(stream.context()))
            .collect::<Result<Vec<_>>>()?;
        // Made last, so that the origin's context is the one bound.
        let fork = Event::new(&context)?;
        let mode = CUstreamCaptureMode_enum::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        // SAFETY: a live stream; `Drop` or `end` ends the capture.
        unsafe { driver::stream_begin_capture(origin.raw(), mode) }
            .at("cuStreamBeginCapture", at)?;
        let capture = Capture {
            origin: origin.raw(),
            others: others.iter().map(|s| s.raw()).collect(),
            joins,
            _fork: fork,
            context,
            active: true,
        };
        capture._fork.record(origin)?;
        for stream in others {
            stream.wait(&capture._fork)?;
        }
        Ok(capture)
    }

    /// Ends the capture and instantiates the graph. `queued` is how queuing
    /// the work went: if it failed, the capture is discarded and that error
    /// returned.
    #[track_caller]
    pub fn end(mut self, queued: Result<()>) -> Result<Graph> {
        let at = Location::caller();
        let joined = self.join_others();
        let graph = self.stop().at("cuStreamEndCapture", at);
        if let Err(error) = queued.and(joined) {
            if let Ok(graph) = graph {
                // SAFETY: the captured graph, not used again; the error that
                // matters is the one returned.
                release_in(&self.context, || unsafe { driver::graph_destroy(graph) });
            }
            return Err(error);
        }
        let graph = graph?;
        // SAFETY: a complete graph.
        // Each node keeps its stream's priority, as a stream would.
        let flags = CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
        let exec = match unsafe { driver::graph_instantiate_with_flags(graph, flags) } {
            Ok(exec) => exec,
            Err(error) => {
                // SAFETY: the graph from above, not used again.
                release_in(&self.context, || unsafe { driver::graph_destroy(graph) });
                return Err(error).at("cuGraphInstantiate", at);
            }
        };
        Ok(Graph {
            graph,
            exec,
            context: self.context.clone(),
        })
    }

    fn join_others(&self) -> Result<()> {
        for (stream, join) in self.others.iter().zip(&self.joins) {
            join.record_on(*stream)
                .at("cuEventRecord", Location::caller())?;
            // SAFETY: live handles: the origin stream and the join event.
            unsafe { driver::stream_wait_event(self.origin, join.raw(), 0) }
                .at("cuStreamWaitEvent", Location::caller())?;
        }
        Ok(())
    }

    /// Ends the capture, once, and returns what was captured.
    fn stop(&mut self) -> Result<CUgraph, crate::DriverError> {
        self.active = false;
        // SAFETY: ends the capture this value began.
        unsafe { driver::stream_end_capture(self.origin) }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if self.active
            && let Ok(graph) = self.stop()
        {
            // SAFETY: the captured graph, never instantiated.
            release_in(&self.context, || unsafe { driver::graph_destroy(graph) });
        }
    }
}
