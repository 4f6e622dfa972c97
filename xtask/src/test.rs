//! `cargo xtask test`: what CI runs. Setup, then formatting, lints, every
//! test of the workspace, the docs as docs.rs builds them, the packages
//! (each built from its archive), and xtask's own tests.
//!
//! GPU tests need no flag: their harness looks for a GPU and reports each one
//! as ignored, with the reason, when there is none.

use crate::Result;
use crate::process::{cargo, run as run_command};

pub fn run() -> Result {
    crate::setup::run()?;
    run_command(cargo().args(["fmt", "--all", "--", "--check"]))
        .map_err(|e| format!("{e}: run `cargo fmt --all`"))?;
    run_command(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run_command(cargo().args(["test", "--workspace"]))?;
    // The docs as docs.rs builds them, without CUDA: broken links,
    // malformed docs and undocumented public items fail like any other
    // check.
    crate::docs_rs::run()?;
    // Every published crate packages for the registry (metadata, the files
    // each ships), and each archive builds as `cargo publish` verifies it.
    crate::package::run()?;
    run_command(cargo().args(["test", "--manifest-path", "xtask/Cargo.toml"]))?;
    // A crate outside the repository, set up and built by the README's
    // steps, and run (without a GPU it says so and exits 0).
    crate::own_kernel::run()?;
    crate::own_kernel::declaration_errors()?;
    println!("xtask test: all passed");
    Ok(())
}
