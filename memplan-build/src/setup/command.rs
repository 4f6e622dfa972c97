//! Running other programs, with errors that say which one failed.

use super::Result;
use std::process::{Command, Output};

/// Runs `command` and captures its output; fails unless it exits with 0.
pub fn output(command: &mut Command) -> Result<Output> {
    let output = command
        .output()
        .map_err(|e| format!("cannot start {}: {e}", describe(command)))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!(
            "{} failed ({}): {}",
            describe(command),
            output.status,
            last_line(&output.stderr)
        ))
    }
}

/// The last non-empty line a program printed: usually the one that says why.
pub fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("(no output)")
        .trim()
        .to_owned()
}

/// The command as one would type it, for messages.
pub fn describe(command: &Command) -> String {
    let mut words = vec![command.get_program().to_string_lossy().into_owned()];
    words.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    format!("`{}`", words.join(" "))
}
