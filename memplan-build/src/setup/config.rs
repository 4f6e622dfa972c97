//! The project's `.cargo/config.toml`: two environment variables for every
//! cargo command run in the project, so that plain `cargo build` works.
//!
//! - `MEMPLAN_CUDA_HOME`: the toolkit whose nvcc `memplan-build` runs.
//! - `CUDA_LIBRARY_PATH`: where cust's build script looks for `libcuda`
//!   (without it, cust stops with "Could not find a cuda installation").

use super::Result;
use std::fs;
use std::path::Path;

/// The `[env]` entries, relative to the project (Cargo resolves
/// `relative = true` against the folder holding `.cargo/`).
pub const ENTRIES: &str = "\
# Written by memplan-setup: the CUDA compiler memplan-build runs, and where
# cust looks for the driver library to link against.
MEMPLAN_CUDA_HOME = { value = \".cuda/toolkit\", relative = true }
CUDA_LIBRARY_PATH = { value = \".cuda\", relative = true }
";

/// Adds the entries to `project/.cargo/config.toml` unless it sets
/// `MEMPLAN_CUDA_HOME` already; whether it wrote anything.
pub fn ensure(project: &Path) -> Result<bool> {
    let dir = project.join(".cargo");
    let path = dir.join("config.toml");
    let old = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let Some(new) = with_entries(&old) else {
        return Ok(false);
    };
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    fs::write(&path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(true)
}

/// `config` with the entries added to its `[env]` table (made if there is
/// none); `None` if it sets `MEMPLAN_CUDA_HOME` already.
fn with_entries(config: &str) -> Option<String> {
    let sets = |line: &str| line.trim_start().starts_with("MEMPLAN_CUDA_HOME");
    if config.lines().any(sets) {
        return None;
    }
    let mut lines: Vec<&str> = config.lines().collect();
    match lines.iter().position(|line| line.trim() == "[env]") {
        // A second `[env]` header would make the file invalid.
        Some(header) => {
            lines.insert(header + 1, ENTRIES.trim_end());
            Some(lines.join("\n") + "\n")
        }
        None => {
            let mut config = config.trim_end().to_owned();
            if !config.is_empty() {
                config.push_str("\n\n");
            }
            Some(config + "[env]\n" + ENTRIES)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_an_env_table_to_an_empty_or_other_config() {
        assert_eq!(with_entries("").unwrap(), format!("[env]\n{ENTRIES}"));
        let other = "[build]\njobs = 2\n";
        assert_eq!(
            with_entries(other).unwrap(),
            format!("[build]\njobs = 2\n\n[env]\n{ENTRIES}")
        );
    }

    #[test]
    fn joins_an_existing_env_table_once() {
        let config = "[env]\nRUST_LOG = \"info\"\n\n[alias]\nb = \"build\"\n";
        let added = with_entries(config).unwrap();
        assert_eq!(added.matches("[env]").count(), 1);
        assert!(added.starts_with(&format!("[env]\n{ENTRIES}")));
        assert!(added.contains("RUST_LOG") && added.contains("[alias]"));
        assert_eq!(with_entries(&added), None);
    }
}
