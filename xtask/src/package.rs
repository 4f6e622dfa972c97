//! The package step of `cargo xtask test`: every published crate packaged
//! for the registry, and each archive built as `cargo publish` verifies it,
//! unpacked, against the other crates' archives.
//!
//! Cargo gives those archives a temporary registry named after its path
//! (`target/package/tmp-registry`), and unpacks them under
//! `$CARGO_HOME/registry/src/-<hash of the path>/`. A crate of one version
//! is never unpacked again there: registries never change a version. Ours
//! do, between two runs from the same folder, and verifying against the
//! first run's sources would test old code (it did: a type added since was
//! "not found"). So what earlier runs unpacked of memplan's crates goes
//! first.

use crate::Result;
use crate::process::{cargo, run as run_command};
use std::path::PathBuf;

pub fn run() -> Result {
    forget_unpacked()?;
    // memplan-kernels, never published, is left out: verifying it would
    // only compile every kernel with nvcc again. `--allow-dirty`: this runs
    // before a commit as often as after.
    run_command(cargo().args([
        "package",
        "--workspace",
        "--exclude",
        "memplan-kernels",
        "--allow-dirty",
    ]))
}

/// Removes memplan's crates unpacked from local registries (the folders
/// whose names begin with `-`, a registry without a host): cargo unpacks
/// them again from the archives.
fn forget_unpacked() -> Result {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    let Some(sources) = home.map(|home| home.join("registry/src")) else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(&sources) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        let Ok(crates) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for unpacked in crates.flatten() {
            if unpacked
                .file_name()
                .to_string_lossy()
                .starts_with("memplan")
            {
                std::fs::remove_dir_all(unpacked.path())
                    .map_err(|e| format!("cannot remove {}: {e}", unpacked.path().display()))?;
            }
        }
    }
    Ok(())
}
