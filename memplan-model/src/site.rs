//! Where a declaration or op is written, and the constructors that start
//! from it: a model reads as the plan did, one line per declaration or op
//! (`Site("copy a -> da", 22, 13).on(0, Copy(Whole(0), Whole(1)))`).

use crate::declarations::{
    BufferInfo, BufferKind, EventInfo, KernelInfo, LoopInfo, Priority, StreamInfo,
};
use crate::op::{Op, OpDef};

/// Where something is written: its label (`copy a -> da`, `data: [f32; n]
/// pinned`), line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site<'a>(pub &'a str, pub u32, pub u32);

impl<'a> Site<'a> {
    /// The buffer declared here: `len` long (a size), of `kind`.
    pub const fn buffer(self, len: u16, kind: BufferKind) -> BufferInfo<'a> {
        BufferInfo {
            site: self,
            len,
            kind,
            array: None,
            gpu: None,
        }
    }

    /// The event declared here.
    pub const fn event(self) -> EventInfo<'a> {
        EventInfo {
            site: self,
            array: None,
        }
    }

    /// The loop written here: ops `first..end` repeated for each value of
    /// input `input` below size `count`.
    pub const fn repeat(self, count: u16, input: u16, first: u16, end: u16) -> LoopInfo<'a> {
        LoopInfo {
            site: self,
            count,
            input,
            first,
            end,
        }
    }

    /// The kernel declared here.
    pub const fn kernel(self) -> KernelInfo<'a> {
        KernelInfo {
            site: self,
            written: &[],
        }
    }

    /// The stream declared here.
    pub const fn stream(self, name: &'a str, priority: Priority) -> StreamInfo<'a> {
        StreamInfo {
            site: self,
            name,
            priority,
            array: None,
            gpu: None,
        }
    }

    /// The op written here, queued on stream `stream`.
    pub const fn on(self, stream: u16, op: Op<'a>) -> OpDef<'a> {
        OpDef {
            site: self,
            stream: Some(stream),
            op,
        }
    }

    /// The op written here, run by the host in program order.
    pub const fn on_host(self, op: Op<'a>) -> OpDef<'a> {
        OpDef {
            site: self,
            stream: None,
            op,
        }
    }
}
