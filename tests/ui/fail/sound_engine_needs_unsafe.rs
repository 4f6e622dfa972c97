// Hole 1: an engine made from parts could hold buffers its description
// does not match, so making one is `unsafe`: only `memplan!` does it, and a
// crate that forbids `unsafe` cannot.
#![forbid(unsafe_code)]

use memplan::__private::{Builder, Engine};
use memplan::{Plan, Result};

fn assemble<P: Plan>(builder: Builder, state: P::State) -> Result<Engine<P>> {
    Engine::new(builder, state)
}

fn main() {}
