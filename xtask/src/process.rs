//! Running other programs, with errors that say which one failed.

use crate::Result;
use memplan_build::setup::command::describe;
pub use memplan_build::setup::command::output;
use std::process::Command;

/// A `cargo` command in the repository root, with the cargo that runs xtask.
pub fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(crate::root());
    command
}

/// Runs `command` with inherited output; fails unless it exits with 0.
pub fn run(command: &mut Command) -> Result {
    let status = command
        .status()
        .map_err(|e| format!("cannot start {}: {e}", describe(command)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} failed ({status})", describe(command)))
    }
}
