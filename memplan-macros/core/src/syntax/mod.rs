//! The grammar of `memplan!`: syn parsers that turn tokens into a syntax
//! tree keeping every token, so later stages can point at the user's code.
//! No meaning is attached here; that is `ir::build`'s job.

mod attrs;
mod decl;
mod for_loop;
mod kw;
mod op;
mod plan;

pub use decl::{
    BufferDecl, BufferDef, BufferSpace, EventDecl, GpusDecl, HostKindDef, KernelDecl,
    KernelParamDef, KernelParamTy, PeerDecl, PlacementDef, PriorityDef, RanksDecl, SliceAccess,
    StreamDecl, StreamDef,
};
pub use for_loop::LoopDef;
pub use op::{
    CollectiveDef, CollectiveWord, HostParamDef, HostStepDef, LaunchDef, OnBlock, OpDef, Place,
};
pub use plan::{Input, ItemDef, ParamDef, PlanDef};
