//! What a project needs before its first build, on any machine: the CUDA
//! compiler (`.cuda/toolkit`, a link to an installed toolkit or to the one
//! in memplan's per-user cache), a stand-in for the driver library where
//! there is no driver (`.cuda/lib64`), and the two environment variables
//! that point the build at them, in the project's `.cargo/config.toml`.
//!
//! `memplan-setup` (this crate's binary) does it for a user's project, and
//! adds `.cuda/` to its `.gitignore`; memplan's own `cargo xtask setup`
//! does it for the repository, whose `.gitignore` is written by hand. Each
//! step is done once: a second run only checks, and a second project on
//! the same machine reuses the first one's download.

pub mod cache;
pub mod command;
pub mod config;
pub mod files;
pub mod gitignore;
pub mod stub;
pub mod toolkit;

use std::path::Path;

/// A step's failure: one message for the person at the terminal.
pub type Result<T = ()> = std::result::Result<T, String>;

/// What [`run`] found and made, for its summary.
pub struct Summary {
    /// Where the compiler came from, and its release.
    pub compiler: String,
    /// The stub, and whether programs will load a real driver.
    pub driver: String,
    /// Whether `.cargo/config.toml` was written now.
    pub configured: bool,
}

/// Sets up the Cargo project at `project`: the compiler and the stub in
/// `project/.cuda`, and `project/.cargo/config.toml` pointing at them.
pub fn run(project: &Path) -> Result<Summary> {
    let cuda_dir = project.join(".cuda");
    let toolkit = toolkit::ensure(&cuda_dir)?;
    let release = toolkit::nvcc_release(&cuda_dir.join("toolkit"))?;
    let from = match toolkit.origin {
        toolkit::Origin::Installed => "installed on this machine",
        toolkit::Origin::Reused => "memplan's cache, from an earlier set-up",
        toolkit::Origin::Downloaded => "memplan's cache, downloaded from PyPI now",
        toolkit::Origin::MovedFromProject => {
            "memplan's cache, moved there from this project's .cuda/toolkit"
        }
    };
    let linked = if toolkit.linked_now {
        "linked now"
    } else {
        "already linked"
    };
    let stub = stub::ensure(project, &cuda_dir)?;
    let loads = if stub.driver_present {
        "NVIDIA driver found: programs load it at run time"
    } else {
        "no NVIDIA driver: programs load the stub and report that no GPU is present"
    };
    let configured = config::ensure(project)?;
    Ok(Summary {
        compiler: format!(
            "CUDA compiler .cuda/toolkit -> {} ({from}; {linked}): {release}",
            toolkit.target.display()
        ),
        driver: format!(
            "driver stub .cuda/lib64 ({} functions of cust's bindings); {loads}",
            stub.symbols
        ),
        configured,
    })
}
