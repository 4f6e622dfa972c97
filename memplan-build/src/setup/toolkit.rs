//! The CUDA compiler. `.cuda/toolkit` is a link: to a toolkit installed on
//! this machine where there is one, else to NVIDIA's pinned 13.0 compiler
//! packages from PyPI, unpacked once into memplan's per-user cache
//! ([`super::cache`]) and shared by every crate set up on the machine.

use super::Result;
use super::cache::{Cache, Filled};
use super::command::{last_line, output};
use super::files::{make_executable, remove};
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

/// The file in an unpacked toolkit that says what it was unpacked from,
/// written last: a toolkit without it, or with other pins in it, is never
/// used. (Set-ups before the cache wrote the same stamp into
/// `.cuda/toolkit`, which is how such a folder can be moved into the cache
/// instead of downloaded again.)
const STAMP: &str = ".memplan-packages";

/// Where `.cuda/toolkit` points, and how it came to.
pub struct Toolkit {
    /// The toolkit's folder (the one holding `bin/nvcc`).
    pub target: PathBuf,
    /// Where it came from.
    pub origin: Origin,
    /// Whether the link was made or changed by this set-up.
    pub linked_now: bool,
}

/// Where the toolkit came from, for the set-up's summary.
pub enum Origin {
    /// Installed on this machine (`CUDA_PATH`, `/usr/local/cuda`, `PATH`).
    Installed,
    /// memplan's cache, filled by an earlier set-up (of any crate).
    Reused,
    /// memplan's cache, downloaded from PyPI by this set-up.
    Downloaded,
    /// memplan's cache, filled with the toolkit that a set-up from before
    /// the cache had unpacked into this project's `.cuda/toolkit`.
    MovedFromProject,
}

/// Makes `cuda_dir/toolkit` a link to a working toolkit, doing as little as
/// it can: an installed toolkit if the machine has one, else the cache's.
pub fn ensure(cuda_dir: &Path) -> Result<Toolkit> {
    fs::create_dir_all(cuda_dir)
        .map_err(|e| format!("cannot create {}: {e}", cuda_dir.display()))?;
    let (target, origin) = match crate::nvcc::installed_toolkit() {
        Some(installed) => (installed, Origin::Installed),
        None => from_cache(&cuda_dir.join("toolkit"))?,
    };
    let linked_now = link(cuda_dir, &target)?;
    Ok(Toolkit {
        target,
        origin,
        linked_now,
    })
}

/// The cache's entry for [`PACKAGES`], filled if it is not yet.
fn from_cache(project_toolkit: &Path) -> Result<(PathBuf, Origin)> {
    let cache = Cache::from_env()?;
    let name = entry_name();
    let entry = cache.entry(&name);
    let mut moved = false;
    let filled = cache.fill(&name, is_complete, |scratch, made| {
        // A toolkit unpacked here by an older set-up is the same files:
        // moving it is one rename where the cache is on the same file
        // system, and saves a download.
        if !project_toolkit.is_symlink() && is_complete(project_toolkit) {
            match fs::rename(project_toolkit, made) {
                Ok(()) => {
                    moved = true;
                    return Ok(());
                }
                Err(e) => println!(
                    "setup: cannot move {} into the cache ({e}); downloading instead",
                    project_toolkit.display()
                ),
            }
        }
        println!(
            "setup: downloading {} from PyPI into {}",
            PACKAGES.join(", "),
            entry.display()
        );
        download(scratch, made)
    })?;
    let origin = match filled {
        Filled::Reused => Origin::Reused,
        Filled::Made if moved => Origin::MovedFromProject,
        Filled::Made => Origin::Downloaded,
    };
    Ok((entry, origin))
}

/// The cache entry's name: the nvcc release, the machine's architecture
/// (pip picks the packages for it, and one home folder may serve machines
/// of several), and a hash of the stamp, so that new pins make a new entry
/// and never change an old one under a crate that uses it.
pub fn entry_name() -> String {
    let release = PACKAGES
        .iter()
        .find_map(|package| package.strip_prefix("nvidia-cuda-nvcc=="))
        .unwrap_or("unpinned");
    format!(
        "cuda-{release}-{}-{:016x}",
        std::env::consts::ARCH,
        fnv1a(&stamp())
    )
}

/// What [`STAMP`] says of a complete toolkit.
fn stamp() -> String {
    PACKAGES.join("\n")
}

/// FNV-1a, 64 bits: a hash that never changes between Rust releases (the
/// standard library's may), so an entry's name stays the same.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Whether `toolkit` was unpacked from [`PACKAGES`] to the end.
fn is_complete(toolkit: &Path) -> bool {
    toolkit.join("bin/nvcc").is_file()
        && fs::read_to_string(toolkit.join(STAMP)).is_ok_and(|stamp_text| stamp_text == stamp())
}

/// Points `cuda_dir/toolkit` at `target`; whether it changed anything.
fn link(cuda_dir: &Path, target: &Path) -> Result<bool> {
    let toolkit = cuda_dir.join("toolkit");
    if fs::read_link(&toolkit).is_ok_and(|old| old == target) {
        return Ok(false);
    }
    // Made under another name and renamed over the old link, so that a
    // build reading `.cuda/toolkit` meanwhile finds the old or the new one.
    let new = cuda_dir.join(format!(".toolkit.new-{}", std::process::id()));
    remove(&new)?;
    std::os::unix::fs::symlink(target, &new)
        .map_err(|e| format!("cannot make the link {}: {e}", new.display()))?;
    // `rename` does not replace a folder: one unpacked here by a set-up
    // from before the cache, now in the cache or not needed.
    if !toolkit.is_symlink() {
        remove(&toolkit)?;
    }
    fs::rename(&new, &toolkit)
        .map_err(|e| format!("cannot put the link at {}: {e}", toolkit.display()))?;
    Ok(true)
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

/// Downloads [`PACKAGES`] into `scratch` and unpacks them as a toolkit at
/// `made`, its stamp written last.
fn download(scratch: &Path, made: &Path) -> Result {
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

    let wheels = scratch.join("wheels");
    let unpacked = scratch.join("unpacked");
    // `--no-cache-dir`: the unpacked toolkit is the one copy this machine
    // keeps; pip's own cache would hold the wheels a second time.
    let pip = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-cache-dir",
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
        .map_err(|e| format!("cannot list {}: {e}", wheels.display()))?
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
    for bin_dir in ["bin", "nvvm/bin"] {
        make_executable(&root.join(bin_dir))?;
    }
    fs::write(root.join(STAMP), stamp()).map_err(|e| e.to_string())?;
    fs::rename(&root, made).map_err(|e| format!("cannot move the toolkit into place: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv1a() {
        // The published FNV-1a 64 values: an entry's name must not change
        // with the compiler that built memplan-setup.
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_entry_name_says_the_release_and_the_pins() {
        let name = entry_name();
        let prefix = format!("cuda-13.0.88-{}-", std::env::consts::ARCH);
        let hash = name
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(hash, format!("{:016x}", fnv1a(&PACKAGES.join("\n"))));
    }

    #[test]
    fn only_a_stamped_toolkit_is_complete_and_links_replace_folders() {
        let dir = std::env::temp_dir().join(format!("memplan-toolkit-{}", std::process::id()));
        remove(&dir).unwrap();
        let unpacked = dir.join("unpacked");
        fs::create_dir_all(unpacked.join("bin")).unwrap();
        fs::write(unpacked.join("bin/nvcc"), "").unwrap();
        assert!(!is_complete(&unpacked), "no stamp yet");
        fs::write(unpacked.join(STAMP), "nvidia-cuda-nvcc==12.0.0").unwrap();
        assert!(!is_complete(&unpacked), "other pins");
        fs::write(unpacked.join(STAMP), stamp()).unwrap();
        assert!(is_complete(&unpacked));

        // A folder left by a set-up from before the cache becomes a link.
        let cuda_dir = dir.join(".cuda");
        fs::create_dir_all(cuda_dir.join("toolkit/bin")).unwrap();
        assert!(link(&cuda_dir, &unpacked).unwrap());
        assert_eq!(fs::read_link(cuda_dir.join("toolkit")).unwrap(), unpacked);
        assert!(!link(&cuda_dir, &unpacked).unwrap(), "already linked");
        assert!(link(&cuda_dir, &dir).unwrap());
        assert_eq!(fs::read_link(cuda_dir.join("toolkit")).unwrap(), dir);
        assert!(
            unpacked.join("bin/nvcc").is_file(),
            "the old target is kept"
        );
        remove(&dir).unwrap();
    }
}
