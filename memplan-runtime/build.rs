//! Finds libcuda for linking, and on machines without an NVIDIA driver makes
//! `cargo test` and `cargo run` load memplan's driver stub.
//!
//! cust links `-lcuda` from `CUDA_LIBRARY_PATH/lib64`, which
//! `.cargo/config.toml` points at the stub `cargo xtask setup` makes. On a
//! machine without a driver the stub folder also holds `libcuda.so.1`, the
//! file programs load. Cargo adds the link-search folders that build scripts
//! print to the library path of the programs it runs, but only folders under
//! `target/`: so the run-time stub is copied into `OUT_DIR`. On a machine with
//! a driver there is no `libcuda.so.1` in the stub folder, and programs load
//! the real driver.
//!
//! docs.rs (`DOCS_RS` set) has no driver and links nothing: documenting
//! needs no libcuda, so there it does nothing. cust's own build script
//! skips its search for the same variable.

use std::env;
use std::path::PathBuf;
use std::process::exit;

fn main() {
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    if env::var_os("DOCS_RS").is_some() {
        return;
    }
    println!("cargo:rerun-if-env-changed=CUDA_LIBRARY_PATH");
    let candidates: Vec<PathBuf> = env::var_os("CUDA_LIBRARY_PATH")
        .map(|paths| {
            env::split_paths(&paths)
                .map(|dir| dir.join("lib64"))
                .collect()
        })
        .unwrap_or_default();
    for lib64 in &candidates {
        println!(
            "cargo:rerun-if-changed={}",
            lib64.join("libcuda.so").display()
        );
        println!(
            "cargo:rerun-if-changed={}",
            lib64.join("libcuda.so.1").display()
        );
    }

    let linkable = candidates
        .iter()
        .chain(&[PathBuf::from("/usr/local/cuda/lib64/stubs")])
        .any(|dir| dir.join("libcuda.so").exists());
    if !linkable {
        eprintln!(
            "error: memplan-runtime has no libcuda to link against (looked in CUDA_LIBRARY_PATH \
             = {candidates:?} and /usr/local/cuda/lib64/stubs)\n\
             help: run `cargo xtask setup` once: it makes a driver stub in .cuda/lib64"
        );
        exit(1);
    }

    if let Some(stub) = candidates
        .iter()
        .map(|dir| dir.join("libcuda.so.1"))
        .find(|f| f.is_file())
    {
        let out_dir = PathBuf::from(env::var_os("OUT_DIR").unwrap()).join("driver-stub");
        std::fs::create_dir_all(&out_dir).unwrap();
        std::fs::copy(&stub, out_dir.join("libcuda.so.1")).unwrap();
        println!("cargo:rustc-link-search=native={}", out_dir.display());
    }
}
