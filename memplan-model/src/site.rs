//! Where a declaration or op is written. What is written there starts
//! from it, so a model reads as the plan did, one line per declaration or
//! op (`Site("copy a -> da", 22, 13).on(0, Copy(Whole(0), Whole(1)))`):
//! the constructors live beside the types they make, in
//! `declarations.rs` and `op.rs`.

/// Where something is written: its label (`copy a -> da`, `data: [f32; n]
/// pinned`), line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site<'a>(pub &'a str, pub u32, pub u32);
