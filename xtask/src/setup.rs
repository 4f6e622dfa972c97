//! `cargo xtask setup`: the CUDA compiler and the driver stub, each made
//! once; a second run only checks and takes well under two seconds. The
//! work is memplan-build's, which users run as `memplan-setup`: the
//! compiler is downloaded into memplan's per-user cache, shared with every
//! other checkout and crate on the machine, and `.cuda/toolkit` links to
//! it. The repository's `.gitignore` is written by hand, so, unlike
//! `memplan-setup`, this leaves it alone.

use crate::Result;

pub fn run() -> Result {
    let summary = memplan_build::setup::run(&crate::root())?;
    println!("setup: {}", summary.compiler);
    println!("setup: {}", summary.driver);
    Ok(())
}
