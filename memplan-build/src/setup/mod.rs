//! What a project needs before its first build, on any machine: the CUDA
//! compiler (`.cuda/toolkit`), a stand-in for the driver library where
//! there is no driver (`.cuda/lib64`), and the two environment variables
//! that point the build at them, in the project's `.cargo/config.toml`.
//!
//! `memplan-setup` (this crate's binary) does it for a user's project, and
//! memplan's own `cargo xtask setup` for the repository. Each step is done
//! once: a second run only checks.

pub mod command;
pub mod config;
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
    let origin = toolkit::ensure(&cuda_dir)?;
    let release = toolkit::nvcc_release(&cuda_dir.join("toolkit"))?;
    let from = match origin {
        toolkit::Origin::AlreadyThere => "already set up".to_owned(),
        toolkit::Origin::Linked(installed) => format!("linked to {}", installed.display()),
        toolkit::Origin::Downloaded => "NVIDIA's packages from PyPI".to_owned(),
    };
    let stub = stub::ensure(project, &cuda_dir)?;
    let loads = if stub.driver_present {
        "NVIDIA driver found: programs load it at run time"
    } else {
        "no NVIDIA driver: programs load the stub and report that no GPU is present"
    };
    let configured = config::ensure(project)?;
    Ok(Summary {
        compiler: format!("CUDA compiler .cuda/toolkit ({from}): {release}"),
        driver: format!(
            "driver stub .cuda/lib64 ({} functions of cust's bindings); {loads}",
            stub.symbols
        ),
        configured,
    })
}
