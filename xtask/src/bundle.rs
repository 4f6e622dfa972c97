//! `cargo xtask gpu-bundle`: every GPU test, example and benchmark, built in
//! release mode into `target/gpu-bundle` with a `run.sh`, for GPU hosts that
//! have an NVIDIA driver and nothing else (no Rust, no CUDA toolkit).
//!
//! `cargo xtask bench` builds the same benchmarks and runs them here.

use crate::Result;
use crate::process::{cargo, output, run as run_command};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The bundle must travel to the GPU machine, which takes 64 MiB at most.
const MAX_BUNDLE_BYTES: u64 = 60 << 20;

const RUN_SH: &str = include_str!("run.sh");
/// Where a hung program's threads wait, for `run.sh` on hosts without gdb.
const STACKSCAN: &str = include_str!("stackscan.py");

/// A built program and the folder of the bundle it goes into.
pub(crate) struct Artifact {
    pub name: String,
    pub kind: &'static str,
    pub executable: PathBuf,
}

pub fn run() -> Result {
    crate::setup::run()?;
    let artifacts = build_all()?;
    let bundle = crate::root().join("target/gpu-bundle");
    memplan_build::setup::files::remove(&bundle)?;
    for artifact in &artifacts {
        let dir = bundle.join(artifact.kind);
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        fs::copy(&artifact.executable, dir.join(&artifact.name))
            .map_err(|e| format!("cannot copy {}: {e}", artifact.executable.display()))?;
    }
    let run_sh = bundle.join("run.sh");
    fs::write(&run_sh, RUN_SH).map_err(|e| e.to_string())?;
    set_executable(&run_sh)?;
    fs::write(bundle.join("stackscan.py"), STACKSCAN).map_err(|e| e.to_string())?;

    let bytes = folder_size(&bundle)?;
    println!(
        "gpu-bundle: {} programs, {:.1} MiB in {}; run it with {}/run.sh",
        artifacts.len(),
        bytes as f64 / (1 << 20) as f64,
        bundle.display(),
        bundle.display()
    );
    if bytes > MAX_BUNDLE_BYTES {
        return Err(format!(
            "the bundle is {bytes} bytes, over the {MAX_BUNDLE_BYTES}-byte limit"
        ));
    }
    Ok(())
}

pub fn bench() -> Result {
    crate::setup::run()?;
    for artifact in build_all()?.iter().filter(|a| a.kind == "benches") {
        println!("\n=== bench {} ===", artifact.name);
        run_command(&mut Command::new(&artifact.executable))?;
    }
    Ok(())
}

/// Builds the GPU test binaries, every example (`own-kernel` too) and every
/// benchmark.
fn build_all() -> Result<Vec<Artifact>> {
    let mut artifacts = vec![Artifact {
        name: "own-kernel".to_owned(),
        kind: "examples",
        executable: crate::own_kernel::build()?,
    }];
    for (args, target_kind, kind) in [
        (
            &[
                "test",
                "--release",
                "--no-run",
                "--test",
                "gpu",
                "--test",
                "multi_gpu",
            ][..],
            "test",
            "tests",
        ),
        (
            &["build", "--release", "--examples"][..],
            "example",
            "examples",
        ),
        (
            &["build", "--release", "--workspace", "--benches"][..],
            "bench",
            "benches",
        ),
    ] {
        let out = output(
            cargo()
                .args(args)
                .args(["--message-format=json-render-diagnostics", "--config"])
                .arg("profile.release.strip=\"symbols\""),
        )?;
        artifacts.extend(executables(&out.stdout, target_kind, kind));
    }
    Ok(artifacts)
}

/// The executables of targets of one kind (`test`, `example`, `bench`) that
/// cargo's JSON messages report; `--benches` also builds every library's unit
/// tests, which are not benchmarks.
pub(crate) fn executables(
    json_lines: &[u8],
    target_kind: &str,
    kind: &'static str,
) -> Vec<Artifact> {
    String::from_utf8_lossy(json_lines)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["kind"][0] == target_kind)
        .filter_map(|message| {
            Some(Artifact {
                name: message["target"]["name"].as_str()?.to_owned(),
                kind,
                executable: PathBuf::from(message["executable"].as_str()?),
            })
        })
        .collect()
}

fn set_executable(path: &Path) -> Result {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())
}

fn folder_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in fs::read_dir(dir).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let meta = entry.metadata().map_err(|e| e.to_string())?;
        total += if meta.is_dir() {
            folder_size(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_executables_of_the_asked_kind() {
        let lines = br#"{"reason":"compiler-artifact","target":{"name":"memplan","kind":["lib"]},"executable":null}
{"reason":"compiler-artifact","target":{"name":"memplan","kind":["lib"]},"executable":"/t/memplan-99"}
{"reason":"compiler-artifact","target":{"name":"gpu","kind":["test"]},"executable":"/t/gpu-1234"}
{"reason":"build-finished","success":true}"#;
        let found = executables(lines, "test", "tests");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "gpu");
        assert_eq!(found[0].executable, PathBuf::from("/t/gpu-1234"));
    }
}
