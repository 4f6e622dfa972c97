//! `cargo xtask setup`: the CUDA compiler and the driver stub, each made
//! once; a second run only checks and takes well under two seconds. The
//! work is memplan-build's, which users run as `memplan-setup`.

use crate::Result;

pub fn run() -> Result {
    let summary = memplan_build::setup::run(&crate::root())?;
    println!("setup: {}", summary.compiler);
    println!("setup: {}", summary.driver);
    Ok(())
}
