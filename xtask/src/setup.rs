//! `cargo xtask setup`: the CUDA compiler and the driver stub, each made
//! once; a second run only checks and takes well under two seconds.

use crate::toolkit::{self, Origin};
use crate::{Result, stub};

pub fn run() -> Result {
    let root = crate::root();
    let cuda_dir = root.join(".cuda");

    let origin = toolkit::ensure(&cuda_dir)?;
    let toolkit_dir = cuda_dir.join("toolkit");
    let release = toolkit::nvcc_release(&toolkit_dir)?;
    let from = match origin {
        Origin::AlreadyThere => "already set up".to_owned(),
        Origin::Linked(installed) => format!("linked to {}", installed.display()),
        Origin::Downloaded => "NVIDIA's packages from PyPI".to_owned(),
    };
    println!("setup: CUDA compiler .cuda/toolkit ({from}): {release}");

    let stub = stub::ensure(&root, &cuda_dir)?;
    let driver = if stub.driver_present {
        "NVIDIA driver found: programs load it at run time"
    } else {
        "no NVIDIA driver: programs load the stub and report that no GPU is present"
    };
    println!(
        "setup: driver stub .cuda/lib64 ({} functions of cust's bindings); {driver}",
        stub.symbols
    );
    Ok(())
}
