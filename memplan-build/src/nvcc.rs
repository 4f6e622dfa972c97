//! Finding nvcc, and the two runs each source needs: the fatbin (with the
//! headers it included), and the host code whose stubs name the kernels'
//! parameters.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where nvcc was looked for, in order: the toolkit `memplan-setup`
/// provisions, `CUDA_PATH`, `/usr/local/cuda`, then `PATH`.
pub const SEARCHED: &str = "MEMPLAN_CUDA_HOME, CUDA_PATH, /usr/local/cuda and PATH";

/// The environment variables whose change means a new search.
pub const ENV: &[&str] = &["MEMPLAN_CUDA_HOME", "CUDA_PATH", "PATH"];

/// The first nvcc found, or `None`.
pub fn find() -> Option<PathBuf> {
    let provisioned = env::var_os("MEMPLAN_CUDA_HOME").map(PathBuf::from);
    provisioned
        .filter(|home| home.join("bin/nvcc").is_file())
        .or_else(installed_toolkit)
        .map(|home| home.join("bin/nvcc"))
}

/// A toolkit this machine has installed (the folder above `bin/nvcc`):
/// `CUDA_PATH`, `/usr/local/cuda`, or the one whose nvcc is on `PATH`.
pub fn installed_toolkit() -> Option<PathBuf> {
    let homes = env::var_os("CUDA_PATH")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/usr/local/cuda")]);
    let on_path = env::var_os("PATH")
        .map(|path| env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("nvcc"))
        .filter(|nvcc| nvcc.is_file())
        .filter_map(|nvcc| Some(nvcc.canonicalize().ok()?.parent()?.parent()?.to_path_buf()));
    homes
        .chain(on_path)
        .find(|home| home.join("bin/nvcc").is_file())
}

/// One nvcc run's settings, shared by a build's sources.
pub struct Settings<'a> {
    pub nvcc: &'a Path,
    pub includes: &'a [PathBuf],
    pub flags: &'a [String],
    /// `-gencode` values.
    pub gencode: &'a [String],
    /// Every GPU architecture compiled for, real or virtual (`80` is
    /// sm_80 or compute_80), without repeats; the first is the oldest.
    pub architectures: &'a [u32],
}

/// What compiling one source made.
pub struct Compiled {
    pub fatbin: PathBuf,
    /// Every file the source included, itself first.
    pub dependencies: Vec<PathBuf>,
    /// nvcc's host code, whose stubs name the kernels' parameters.
    pub host_code: String,
    /// The source after the host compilation's preprocessor.
    pub host_preprocessed: String,
    /// The source after the preprocessor of each GPU architecture's
    /// compilation of the fatbin, by the name nvcc gives it
    /// (`compute_90`).
    pub device_preprocessed: Vec<(String, String)>,
    /// The PTX the fatbin's machine code and PTX were made from, for each
    /// GPU architecture, by the name nvcc gives it (`compute_90`).
    pub device_ptx: Vec<(String, String)>,
}

/// Compiles `source` into `out` (a folder of its own): the fatbin and its
/// dependency list in one nvcc run, the host code in another.
///
/// Both runs see the contracts of memplan.cuh as attributes (which nvcc
/// warns of, warning 1097, as attributes it does not know, and which
/// change nothing it compiles) and keep their preprocessed sources: what
/// the fatbin was compiled from, for each architecture, is what the
/// contracts read from the host's are compared with. The host code's run
/// takes the fatbin's optimization level, so that both preprocess alike.
/// Both compile a file that includes `source` (see [`main`]), as
/// [`device_ptx`]'s do.
pub fn compile(settings: &Settings, source: &Path, out: &Path) -> Result<Compiled, String> {
    let fatbin = out.join("module.fatbin");
    let depfile = out.join("module.d");
    let host = out.join("host.cpp.ii");
    let device_dir = out.join("device");
    let front_dir = out.join("front");
    fresh(&device_dir)?;
    fresh(&front_dir)?;
    let main = main(out, &format!("#include \"{}\"\n", source.display()))?;

    let mut binary = command(settings);
    binary.arg("-fatbin").arg("-O3");
    for gencode in settings.gencode {
        binary.arg("-gencode").arg(gencode);
    }
    binary
        .arg(format!("-D{CONTRACTS}"))
        .arg("-diag-suppress=1097")
        .arg("-keep")
        .arg("-keep-dir")
        .arg(&device_dir)
        .arg("-MD")
        .arg("-MF")
        .arg(&depfile)
        .arg("-o")
        .arg(&fatbin)
        .arg(&main);
    run(&mut binary, source)?;

    // For the fatbin's architectures, as it compiles device code too (else
    // for nvcc's default, which the source may not support).
    let mut front = command(settings);
    for gencode in settings.gencode {
        front.arg("-gencode").arg(gencode);
    }
    front
        .arg("-cuda")
        .arg("-O3")
        .arg(format!("-D{CONTRACTS}"))
        .arg("-diag-suppress=1097")
        .arg("-keep")
        .arg("-keep-dir")
        .arg(&front_dir)
        .arg("-o")
        .arg(&host)
        .arg(&main);
    run(&mut front, source)?;

    let host_preprocessed = kept(&front_dir, ".cpp4.ii")?
        .pop()
        .map(|(_, text)| text)
        .ok_or_else(|| {
            format!(
                "nvcc kept no host preprocessed source of {}",
                source.display()
            )
        })?;
    // `memplan.compute_90.cpp1.ii`: one for each virtual architecture.
    let device_preprocessed = kept(&device_dir, ".cpp1.ii")?
        .into_iter()
        .map(|(name, text)| (architecture_of(&name), text))
        .collect();
    // `memplan.compute_90.ptx`: the same.
    let device_ptx = kept(&device_dir, ".ptx")?
        .into_iter()
        .map(|(name, text)| (architecture_of(&name), text))
        .collect();
    let depends = fs::read_to_string(&depfile)
        .map_err(|e| format!("cannot read {}: {e}", depfile.display()))?;
    let host_code =
        fs::read_to_string(&host).map_err(|e| format!("cannot read {}: {e}", host.display()))?;
    Ok(Compiled {
        fatbin,
        // What `main` includes, without it.
        dependencies: dependencies(&depends)
            .into_iter()
            .filter(|path| *path != main)
            .collect(),
        host_code,
        host_preprocessed,
        device_preprocessed,
        device_ptx,
    })
}

/// The file every nvcc run of memplan-build for a source compiles, in
/// its folder `out`, written anew before each: what the run is for,
/// around an `#include` of the source. As all runs compile the same path,
/// the source's `__BASE_FILE__` and `__INCLUDE_LEVEL__` (1) are the same
/// in the fatbin's compilation, the host's, and each probe's and
/// measure's: a source that tests them compiles the same in all.
fn main(out: &Path, text: &str) -> Result<PathBuf, String> {
    let main = out.join("memplan.cu");
    fs::write(&main, text).map_err(|e| format!("cannot write {}: {e}", main.display()))?;
    Ok(main)
}

/// Makes `dir` anew and empty: files another build kept there (of another
/// source, where the sources' numbering changed) would be read as this
/// one's.
fn fresh(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("cannot empty {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// `compute_90` of `memplan.compute_90.cpp1.ii`.
fn architecture_of(kept: &str) -> String {
    let stem = kept.split_once('.').map_or(kept, |(_, rest)| rest);
    stem.split('.').next().unwrap_or_default().to_owned()
}

impl Compiled {
    /// The source after each compilation's preprocessor: the host's, then
    /// each GPU architecture's.
    pub fn preprocessed(&self) -> Vec<&str> {
        [self.host_preprocessed.as_str()]
            .into_iter()
            .chain(
                self.device_preprocessed
                    .iter()
                    .map(|(_, text)| text.as_str()),
            )
            .collect()
    }
}

/// The files of `dir` whose names end in `suffix`, by name, sorted, with
/// their text.
fn kept(dir: &Path, suffix: &str) -> Result<Vec<(String, String)>, String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.ends_with(suffix) {
            let text = fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            found.push((name, text));
        }
    }
    found.sort();
    Ok(found)
}

/// The macro under which memplan.cuh's contracts become attributes.
pub const CONTRACTS: &str = "__MEMPLAN_CONTRACTS__";

/// The PTX of `text`, a source [`crate::layout`] or [`crate::probe`]
/// wrote that includes `source`, for each GPU architecture of the build,
/// compiled in one run as the fatbin is: for the same architectures
/// (whose list the source may test, `__CUDA_ARCH_LIST__`), as PTX alone,
/// with the contracts defined, in the folder `name` of `out`.
pub fn device_ptx(
    settings: &Settings,
    source: &Path,
    name: &str,
    text: &str,
    out: &Path,
) -> Result<Vec<String>, String> {
    let dir = out.join(name);
    fresh(&dir)?;
    let main = main(out, text)?;
    let mut compile = command(settings);
    compile.arg("-fatbin").arg("-O3");
    for architecture in settings.architectures {
        compile.arg("-gencode").arg(format!(
            "arch=compute_{architecture},code=compute_{architecture}"
        ));
    }
    compile
        .arg(format!("-D{CONTRACTS}"))
        .arg("-diag-suppress=1097")
        .arg("-keep")
        .arg("-keep-dir")
        .arg(&dir)
        .arg("-o")
        .arg(dir.join("module.fatbin"))
        .arg(&main);
    run(&mut compile, source)?;
    settings
        .architectures
        .iter()
        .map(|architecture| {
            let ptx = dir.join(format!("memplan.compute_{architecture}.ptx"));
            fs::read_to_string(&ptx).map_err(|e| format!("cannot read {}: {e}", ptx.display()))
        })
        .collect()
}

/// nvcc with the build's include path and flags.
fn command(settings: &Settings) -> Command {
    let mut command = Command::new(settings.nvcc);
    for include in settings.includes {
        command.arg("-I").arg(include);
    }
    command.args(settings.flags);
    command
}

fn run(command: &mut Command, source: &Path) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "nvcc failed on {}:\n{}{}",
        source.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// The prerequisites of a Makefile rule as nvcc writes it: `target : a \`
/// lines, with `\ ` for a space inside a name.
fn dependencies(rule: &str) -> Vec<PathBuf> {
    let Some((_, prerequisites)) = rule.split_once(':') else {
        return Vec::new();
    };
    let joined = prerequisites.replace("\\\n", " ").replace("\\ ", "\u{0}");
    joined
        .split_whitespace()
        .map(|name| PathBuf::from(name.replace('\u{0}', " ")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_dependency_rule() {
        let rule = "module.fatbin : src/blur.cu \\\n    src/common.cuh \\\n    /opt/my\\ cuda/include/cuda_runtime.h\n";
        assert_eq!(
            dependencies(rule),
            [
                PathBuf::from("src/blur.cu"),
                PathBuf::from("src/common.cuh"),
                PathBuf::from("/opt/my cuda/include/cuda_runtime.h"),
            ]
        );
        assert!(dependencies("").is_empty());
    }
}
