//! `cargo xtask <task>`: everything memplan needs beyond plain cargo.
//!
//! Every task that builds runs `setup` first, so on a fresh machine
//! `cargo xtask test` and `cargo xtask demo` are the only commands needed.

mod bundle;
mod demo;
mod docs_rs;
mod host_cost;
mod own_kernel;
mod package;
mod process;
mod setup;
mod test;

use std::path::PathBuf;
use std::process::ExitCode;

/// A task's failure: one message for the person at the terminal.
pub type Result<T = ()> = std::result::Result<T, String>;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  setup        find or install the CUDA 13.0 compiler and make the driver stub (idempotent)
  test         setup, then every test, lint and format check (what CI runs)
  demo         setup, then build and run every example
  docs         build the documentation as docs.rs does: no CUDA, warnings are errors
  own-kernel   build and run examples/own-kernel as a crate outside this repository
  gpu-bundle   setup, then build every GPU test, example and benchmark into
               target/gpu-bundle, with a run.sh for a host that has only a driver
  bench        setup, then run the benchmarks on this machine
  host-cost    setup, then time memplan's own host cost per run against a CUDA
               driver that does nothing (no GPU needed): host-cost [--count] [launches...]
               (--count: instructions under valgrind's callgrind, not time)";

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    let result = match task.as_deref() {
        Some("setup") => setup::run().map(|_| ()),
        Some("test") => test::run(),
        Some("demo") => demo::run(),
        Some("docs") => docs_rs::run(),
        Some("own-kernel") => setup::run()
            .and_then(|()| own_kernel::run())
            .and_then(|()| own_kernel::declaration_errors()),
        Some("gpu-bundle") => bundle::run(),
        Some("bench") => bundle::bench(),
        Some("host-cost") => {
            let mut args: Vec<String> = std::env::args().skip(2).collect();
            let count = args.iter().any(|arg| arg == "--count");
            args.retain(|arg| arg != "--count");
            host_cost::run_host_cost(&args, count)
        }
        Some("help" | "--help" | "-h") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The repository root: the folder above `xtask/`.
pub fn root() -> PathBuf {
    let xtask = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().expect("xtask/ has a parent").to_path_buf()
}
