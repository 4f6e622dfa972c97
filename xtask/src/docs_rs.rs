//! The documentation, built as docs.rs builds it: `DOCS_RS` set, and
//! neither the CUDA toolkit nor the driver stub this repository's set-up
//! provides within reach, so that a build script that needs either fails
//! here as it would there. Warnings are errors, `missing_docs` among them
//! (each published crate warns of it).
//!
//! How close this is to docs.rs: the build scripts, features and rustdoc
//! see what they would there, and none of `.cargo/config.toml` applies.
//! What differs: docs.rs runs nightly rustdoc on each crate from its
//! archive, with its dependencies' newest versions; this runs the cargo
//! that runs xtask on the workspace, with `Cargo.lock`. A toolkit installed
//! system-wide (`/usr/local/cuda`) cannot be hidden from here: CI has none.

use crate::Result;
use crate::process::run as run_command;
use std::ffi::{OsStr, OsString};
use std::process::Command;

/// The variables through which a build finds CUDA: those
/// `.cargo/config.toml` sets (which cargo also gives xtask, and so every
/// command xtask starts) and those cust's and memplan-build's searches
/// read.
const CUDA_ENV: &[&str] = &[
    "MEMPLAN_CUDA_HOME",
    "CUDA_LIBRARY_PATH",
    "CUDA_PATH",
    "CUDA_ROOT",
    "CUDA_TOOLKIT_ROOT_DIR",
];

/// `cargo doc` of every crate of the workspace, in `target/docsrs`, so
/// that building without CUDA does not make the next ordinary build start
/// over.
pub fn run() -> Result {
    let root = crate::root();
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .args(["doc", "--workspace", "--no-deps", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(root.join("target/docsrs"))
        // Cargo reads `.cargo/config.toml` from the folder it runs in and
        // those above it, not from the manifest's: outside the repository,
        // its `[env]` (the toolkit, the driver stub) does not apply.
        .current_dir(std::env::temp_dir())
        .env("DOCS_RS", "1")
        .env("RUSTDOCFLAGS", "-D warnings");
    for variable in CUDA_ENV {
        cargo.env_remove(variable);
    }
    if let Some(path) = std::env::var_os("PATH") {
        cargo.env("PATH", without_nvcc(&path));
    }
    run_command(&mut cargo)
}

/// `path` without the folders that hold an `nvcc`.
fn without_nvcc(path: &OsStr) -> OsString {
    let kept: Vec<_> = std::env::split_paths(path)
        .filter(|dir| !dir.join("nvcc").is_file())
        .collect();
    std::env::join_paths(kept).unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn folders_with_nvcc_leave_the_path_and_others_stay() {
        let base = std::env::temp_dir().join(format!("xtask-docs-rs-{}", std::process::id()));
        let (toolkit, tools) = (base.join("cuda/bin"), base.join("bin"));
        fs::create_dir_all(&toolkit).unwrap();
        fs::create_dir_all(&tools).unwrap();
        fs::write(toolkit.join("nvcc"), "").unwrap();
        fs::write(tools.join("cargo"), "").unwrap();
        let path = std::env::join_paths([&tools, &toolkit, &tools]).unwrap();
        let kept: Vec<_> = std::env::split_paths(&without_nvcc(&path)).collect();
        fs::remove_dir_all(&base).unwrap();
        assert_eq!(kept, [tools.clone(), tools]);
    }
}
