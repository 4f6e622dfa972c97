//! The CUDA compiler: `.cuda/toolkit` is either a link to a toolkit this
//! machine has, or NVIDIA's pinned 13.0 compiler packages from PyPI unpacked.

use super::Result;
use super::command::{last_line, output};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// NVIDIA's compiler packages on PyPI, pinned; unpacked together they form a
/// toolkit with `bin/nvcc`, `nvvm/bin/cicc`, the crt and runtime headers.
pub const PACKAGES: &[&str] = &[
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
];

/// Written into an unpacked toolkit; a different list means the pins moved.
const STAMP: &str = ".memplan-packages";

/// Where the toolkit came from, for the setup summary.
pub enum Origin {
    /// Unpacked earlier; nothing to do.
    AlreadyThere,
    /// A link to a toolkit installed on this machine.
    Linked(PathBuf),
    /// Downloaded from PyPI just now.
    Downloaded,
}

/// Makes `.cuda/toolkit/bin/nvcc` work, doing as little as it can.
pub fn ensure(cuda_dir: &Path) -> Result<Origin> {
    let toolkit = cuda_dir.join("toolkit");
    if is_current(&toolkit) {
        return Ok(Origin::AlreadyThere);
    }
    remove(&toolkit)?;
    fs::create_dir_all(cuda_dir)
        .map_err(|e| format!("cannot create {}: {e}", cuda_dir.display()))?;

    if let Some(installed) = crate::nvcc::installed_toolkit() {
        std::os::unix::fs::symlink(&installed, &toolkit)
            .map_err(|e| format!("cannot link {}: {e}", toolkit.display()))?;
        return Ok(Origin::Linked(installed));
    }
    download(cuda_dir, &toolkit)?;
    Ok(Origin::Downloaded)
}

/// The `nvcc --version` line that names the release.
pub fn nvcc_release(toolkit: &Path) -> Result<String> {
    let out = output(Command::new(toolkit.join("bin/nvcc")).arg("--version"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .find(|line| line.contains("release"))
        .unwrap_or("nvcc (unknown release)")
        .trim()
        .to_owned())
}

fn is_current(toolkit: &Path) -> bool {
    if !toolkit.join("bin/nvcc").is_file() {
        return false;
    }
    if toolkit.is_symlink() {
        return true;
    }
    fs::read_to_string(toolkit.join(STAMP)).is_ok_and(|stamp| stamp == PACKAGES.join("\n"))
}

fn download(cuda_dir: &Path, toolkit: &Path) -> Result {
    let pip_works = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !pip_works {
        return Err(
            "no CUDA toolkit was found (CUDA_PATH, /usr/local/cuda, nvcc on PATH) and \
                    `python3 -m pip` is not available to download NVIDIA's CUDA 13.0 compiler \
                    from PyPI: install python3 with pip, or a CUDA toolkit"
                .into(),
        );
    }

    // Work in a scratch folder and rename at the end, so that an interrupted
    // setup never leaves a toolkit that looks complete.
    let scratch = cuda_dir.join("download");
    remove(&scratch)?;
    let wheels = scratch.join("wheels");
    let unpacked = scratch.join("unpacked");
    println!("setup: downloading {} from PyPI", PACKAGES.join(", "));
    let pip = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--quiet",
            "-d",
        ])
        .arg(&wheels)
        .args(PACKAGES)
        .output()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    if !pip.status.success() {
        return Err(format!(
            "could not download NVIDIA's CUDA compiler from PyPI (is the network reachable?): {}",
            last_line(&pip.stderr)
        ));
    }

    let mut wheel_files: Vec<PathBuf> = fs::read_dir(&wheels)
        .map_err(|e| e.to_string())?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .collect();
    wheel_files.sort();
    for wheel in &wheel_files {
        output(
            Command::new("python3")
                .args(["-m", "zipfile", "-e"])
                .arg(wheel)
                .arg(&unpacked),
        )?;
    }

    // The wheels install under nvidia/cu13/ (bin, nvvm, include, lib).
    let root = unpacked.join("nvidia/cu13");
    if !root.join("bin/nvcc").is_file() {
        return Err(format!(
            "the PyPI packages did not contain nvidia/cu13/bin/nvcc (looked in {})",
            unpacked.display()
        ));
    }
    // Zip archives do not keep the executable bit.
    for bin_dir in ["bin", "nvvm/bin"] {
        make_executable(&root.join(bin_dir))?;
    }
    fs::write(root.join(STAMP), PACKAGES.join("\n")).map_err(|e| e.to_string())?;
    fs::rename(&root, toolkit).map_err(|e| format!("cannot move the toolkit into place: {e}"))?;
    remove(&scratch)
}

fn make_executable(dir: &Path) -> Result {
    use std::os::unix::fs::PermissionsExt;
    for entry in fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("cannot chmod {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Removes a file, link or folder if it is there.
pub fn remove(path: &Path) -> Result {
    let result = match fs::symlink_metadata(path) {
        Err(_) => return Ok(()),
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
    };
    result.map_err(|e| format!("cannot remove {}: {e}", path.display()))
}
