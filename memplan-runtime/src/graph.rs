//! CUDA graphs: record queued work once, replay it with one launch.

use crate::context::{Context, bind_quietly};
use crate::driver::check;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::event::Event;
use crate::stream::Stream;
use cust::sys::{self as cu, CUgraph, CUgraphExec, CUstreamCaptureMode_enum};

/// An instantiated CUDA graph: work captured from streams, replayed with a
/// single launch (one driver call instead of one per operation).
pub struct Graph {
    graph: CUgraph,
    exec: CUgraphExec,
    context: Context,
}

// SAFETY: graph handles may be used from any thread of the process.
unsafe impl Send for Graph {}
unsafe impl Sync for Graph {}

impl Graph {
    /// Captures the work that `record` queues on `streams` (the first one
    /// starts the capture; the others join it and are joined back at the
    /// end), and instantiates it. Nothing runs while capturing.
    ///
    /// # Safety
    /// Every buffer the captured work touches stays allocated for as long as
    /// the graph lives: the graph keeps their addresses, not the buffers.
    #[track_caller]
    pub unsafe fn capture(
        streams: &[&Stream],
        record: impl FnOnce() -> Result<()>,
    ) -> Result<Graph> {
        let at = Location::caller();
        let Some((origin, others)) = streams.split_first() else {
            return Err(Fault::Unsupported("a capture needs at least one stream"))
                .at("Graph::capture", at);
        };
        let context = origin.context().clone();
        context.bind_to_thread()?;
        let mode = CUstreamCaptureMode_enum::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        // SAFETY: a live stream; the capture ends below on every path.
        check(unsafe { cu::cuStreamBeginCapture_v2(origin.raw(), mode) })
            .at("cuStreamBeginCapture", at)?;

        // Forks the other streams off the origin, runs `record`, joins them
        // back: a capture must end on the stream that began it.
        let captured = (|| {
            let fork = Event::new(&context)?;
            fork.record(origin)?;
            for stream in others {
                stream.wait(&fork)?;
            }
            record()?;
            let joins = others
                .iter()
                .map(|_| Event::new(&context))
                .collect::<Result<Vec<_>>>()?;
            for (stream, join) in others.iter().zip(&joins) {
                join.record(stream)?;
                origin.wait(join)?;
            }
            Ok::<_, crate::Error>(joins)
        })();

        let mut graph = std::ptr::null_mut();
        // SAFETY: ends the capture begun above; writes the captured graph.
        let ended = check(unsafe { cu::cuStreamEndCapture(origin.raw(), &mut graph) });
        let _events = captured?;
        ended.at("cuStreamEndCapture", at)?;

        let mut exec = std::ptr::null_mut();
        // SAFETY: a complete graph; writes the executable graph.
        let instantiated = check(unsafe { cu::cuGraphInstantiateWithFlags(&mut exec, graph, 0) });
        if let Err(error) = instantiated {
            // SAFETY: the graph from above, not used again.
            unsafe { cu::cuGraphDestroy(graph) };
            return Err(error).at("cuGraphInstantiate", at);
        }
        Ok(Graph {
            graph,
            exec,
            context,
        })
    }

    /// Queues one replay of the graph on `stream`.
    ///
    /// # Safety
    /// The host does not touch the memory the graph uses until `stream` has
    /// finished the replay.
    #[track_caller]
    pub unsafe fn launch(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live handles; memory is the caller's promise.
        check(unsafe { cu::cuGraphLaunch(self.exec, stream.raw()) })
            .at("cuGraphLaunch", Location::caller())
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        bind_quietly(&self.context);
        // SAFETY: made in `capture`, destroyed once each.
        unsafe {
            cu::cuGraphExecDestroy(self.exec);
            cu::cuGraphDestroy(self.graph);
        }
    }
}
