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
pub fn compile(settings: &Settings, source: &Path, out: &Path) -> Result<Compiled, String> {
    let fatbin = out.join("module.fatbin");
    let depfile = out.join("module.d");
    let host = out.join("host.cpp.ii");
    let device_dir = out.join("device");
    let front_dir = out.join("front");
    for dir in [out, &device_dir, &front_dir] {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }

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
        .arg(source);
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
        .arg(source);
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
    // `module.compute_90.cpp1.ii`: one for each virtual architecture.
    let device_preprocessed = kept(&device_dir, ".cpp1.ii")?
        .into_iter()
        .map(|(name, text)| {
            let architecture = name
                .trim_end_matches(".cpp1.ii")
                .rsplit('.')
                .next()
                .unwrap_or_default()
                .to_owned();
            (architecture, text)
        })
        .collect();
    let depends = fs::read_to_string(&depfile)
        .map_err(|e| format!("cannot read {}: {e}", depfile.display()))?;
    let host_code =
        fs::read_to_string(&host).map_err(|e| format!("cannot read {}: {e}", host.display()))?;
    Ok(Compiled {
        fatbin,
        dependencies: dependencies(&depends),
        host_code,
        host_preprocessed,
        device_preprocessed,
    })
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

/// The PTX of `text`, a source [`crate::layout`] or [`crate::arch_types`]
/// wrote (to `out`, as `{stem}.cu`) that includes `source`, compiled for
/// GPU architecture `architecture` as the fatbin was: with the contracts
/// defined, which the source's own code may test.
pub fn ptx(
    settings: &Settings,
    source: &Path,
    stem: &str,
    text: &str,
    out: &Path,
    architecture: u32,
) -> Result<String, String> {
    let file = out.join(format!("{stem}.cu"));
    let ptx = out.join(format!("{stem}.{architecture}.ptx"));
    fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let mut compile = command(settings);
    compile
        .arg("-ptx")
        .arg("-O3")
        .arg(format!("-arch=compute_{architecture}"))
        .arg(format!("-D{CONTRACTS}"))
        .arg("-diag-suppress=1097")
        .arg("-o")
        .arg(&ptx)
        .arg(&file);
    run(&mut compile, source)?;
    fs::read_to_string(&ptx).map_err(|e| format!("cannot read {}: {e}", ptx.display()))
}

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
