//! A stand-in for the NVIDIA driver library, `libcuda.so.1`, so that the
//! product links (and its programs start) on machines without a driver.
//!
//! It defines exactly the functions that cust's bindings (`cust_raw`)
//! declare, each returning `CUDA_ERROR_STUB_LIBRARY`: `cuInit` fails with
//! "this is a stub library", and memplan reports "no CUDA driver".
//!
//! Layout, under `.cuda/lib64` (cust's build looks in `lib64` under
//! `CUDA_LIBRARY_PATH`, which the project's `.cargo/config.toml` sets to
//! `.cuda`):
//! - on a machine without a driver, `libcuda.so.1` and the link `libcuda.so`:
//!   the first is what programs load, and memplan-runtime's build script puts
//!   it where `cargo test` and `cargo run` look;
//! - on a machine with a driver, only `libcuda.so` (soname `libcuda.so.1`):
//!   programs link against the stub and load the real driver.

use super::Result;
use super::command::output;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `CUDA_ERROR_STUB_LIBRARY`: "the CUDA driver that the application has
/// loaded is a stub library". cust_raw's error enum has this value, so
/// reading it back is defined behaviour.
const STUB_ERROR: u32 = 34;

/// What `ensure` found and made.
pub struct Stub {
    /// How many functions the stub defines: every one cust's bindings
    /// declare.
    pub symbols: usize,
    /// Whether the machine has an NVIDIA driver, which programs load
    /// instead of the stub.
    pub driver_present: bool,
}

/// Makes the stub in `cuda_dir/lib64` from the cust_raw that the Cargo
/// project at `project` locks, unless the one there is current.
pub fn ensure(project: &Path, cuda_dir: &Path) -> Result<Stub> {
    let driver_present = driver_present();
    let cust_raw = cust_raw_bindings(project)?;
    let symbols = declared_functions(&fs::read_to_string(&cust_raw).map_err(|e| e.to_string())?);
    if symbols.is_empty() {
        return Err(format!(
            "found no `pub fn cu*` declarations in {}",
            cust_raw.display()
        ));
    }

    let lib64 = cuda_dir.join("lib64");
    let stamp_path = cuda_dir.join("libcuda_stub.stamp");
    let stamp = format!(
        "{}\n{} symbols\ndriver present: {driver_present}\n",
        cust_raw.display(),
        symbols.len()
    );
    let link = lib64.join("libcuda.so");
    let loadable = lib64.join("libcuda.so.1");
    if fs::read_to_string(&stamp_path).is_ok_and(|old| old == stamp) && link.exists() {
        return Ok(Stub {
            symbols: symbols.len(),
            driver_present,
        });
    }

    for old in [&link, &loadable, &stamp_path] {
        super::files::remove(old)?;
    }
    fs::create_dir_all(&lib64).map_err(|e| e.to_string())?;
    let source = cuda_dir.join("libcuda_stub.c");
    fs::write(&source, c_source(&symbols, &cust_raw)).map_err(|e| e.to_string())?;

    // The file name programs load is `libcuda.so.1`; only a machine without
    // a driver may have one here.
    let library = if driver_present { &link } else { &loadable };
    output(
        Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()))
            .args(["-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1", "-o"])
            .arg(library)
            .arg(&source),
    )
    .map_err(|e| format!("cannot compile the driver stub (is a C compiler installed?): {e}"))?;
    if !driver_present {
        std::os::unix::fs::symlink("libcuda.so.1", lib64.join("libcuda.so"))
            .map_err(|e| e.to_string())?;
    }
    fs::write(&stamp_path, stamp).map_err(|e| e.to_string())?;
    Ok(Stub {
        symbols: symbols.len(),
        driver_present,
    })
}

/// Whether this machine has an NVIDIA driver library the loader can find.
fn driver_present() -> bool {
    let cache = Command::new("ldconfig").arg("-p").output();
    if cache.is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("libcuda.so.1 ")) {
        return true;
    }
    let mut dirs: Vec<PathBuf> = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/local/nvidia/lib64",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&paths));
    }
    // Our own stub, wherever a build put it, is not a driver.
    dirs.iter()
        .filter(|dir| !dir.to_string_lossy().contains("stub"))
        .any(|dir| dir.join("libcuda.so.1").exists())
}

/// `src/cuda.rs` of the cust_raw that the project's Cargo.lock selects;
/// the lock file is made, and the crates fetched, if needed.
fn cust_raw_bindings(project: &Path) -> Result<PathBuf> {
    let lock_path = project.join("Cargo.lock");
    let cargo = || {
        let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        command.current_dir(project);
        command
    };
    if !lock_path.is_file() {
        output(cargo().args(["generate-lockfile", "--quiet"]))?;
    }
    let lock = fs::read_to_string(&lock_path)
        .map_err(|e| format!("cannot read {}: {e}", lock_path.display()))?;
    let version = locked_version(&lock, "cust_raw").ok_or_else(|| {
        format!(
            "{} does not list cust_raw: does the project depend on memplan?",
            lock_path.display()
        )
    })?;
    if let Some(found) = find_in_registry("cust_raw", &version) {
        return Ok(found);
    }
    output(cargo().args(["fetch", "--quiet"]))?;
    find_in_registry("cust_raw", &version).ok_or_else(|| {
        format!("cust_raw {version} is not in the cargo registry after `cargo fetch`")
    })
}

fn locked_version(lock: &str, package: &str) -> Option<String> {
    let mut lines = lock.lines();
    lines.find(|line| *line == format!("name = \"{package}\""))?;
    let version = lines
        .next()?
        .strip_prefix("version = \"")?
        .strip_suffix('"')?;
    Some(version.to_owned())
}

fn find_in_registry(package: &str, version: &str) -> Option<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))?;
    fs::read_dir(cargo_home.join("registry/src"))
        .ok()?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .map(|index| index.join(format!("{package}-{version}/src/cuda.rs")))
        .find(|path| path.is_file())
}

/// The names of the functions a bindgen file declares: `pub fn cuInit(`.
fn declared_functions(bindings: &str) -> Vec<String> {
    let mut names: Vec<String> = bindings
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub fn "))
        .filter_map(|rest| rest.split('(').next())
        .filter(|name| name.starts_with("cu"))
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

fn c_source(symbols: &[String], bindings: &Path) -> String {
    let mut c = format!(
        "/* Made by memplan-setup from {}.\n \
         * A stand-in for libcuda.so.1 on machines without an NVIDIA driver:\n \
         * every function answers CUDA_ERROR_STUB_LIBRARY ({STUB_ERROR}). */\n",
        bindings.display()
    );
    for symbol in symbols {
        c.push_str(&format!("int {symbol}(void) {{ return {STUB_ERROR}; }}\n"));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_declared_functions_only() {
        let bindings = "extern \"C\" {\n    pub fn cuInit(Flags: u32) -> CUresult;\n}\n\
                        pub fn helper() {}\nextern \"C\" {\n    pub fn cuMemAlloc_v2(p: *mut u64, n: usize) -> CUresult;\n}\n";
        assert_eq!(declared_functions(bindings), ["cuInit", "cuMemAlloc_v2"]);
    }

    #[test]
    fn reads_a_locked_version() {
        let lock = "[[package]]\nname = \"cust\"\nversion = \"0.3.2\"\n\n[[package]]\nname = \"cust_raw\"\nversion = \"0.11.3\"\n";
        assert_eq!(locked_version(lock, "cust_raw").as_deref(), Some("0.11.3"));
        assert_eq!(locked_version(lock, "syn"), None);
    }
}
