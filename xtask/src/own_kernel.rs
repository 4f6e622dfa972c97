//! `examples/own-kernel`, built the way a crate outside this repository is
//! built by the README's steps: a clean copy outside the repository (so
//! that none of its `.cargo/config.toml` applies), its path dependencies
//! made absolute, set up by `memplan-setup`, and built by a cargo that has
//! none of this repository's environment.

use crate::Result;
use crate::process::{cargo, run as run_command};
use memplan_build::setup::files::remove;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The variables this repository's `.cargo/config.toml` sets for xtask,
/// which a user's shell would not have.
const REPOSITORY_ENV: &[&str] = &["MEMPLAN_CUDA_HOME", "CUDA_LIBRARY_PATH", "CUDA_PATH"];

/// Where the copy goes: outside the repository, so that none of its
/// `.cargo/config.toml` applies; one folder per checkout, so that two
/// checkouts' runs on one machine do not meet.
fn copy_dir() -> PathBuf {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    crate::root().hash(&mut hasher);
    std::env::temp_dir().join(format!("memplan-own-kernel-{:016x}", hasher.finish()))
}

/// The target folder, kept in this repository's so that a second build
/// reuses the dependencies.
fn target_dir() -> PathBuf {
    crate::root().join("target/own-kernel")
}

/// Copies the example, sets it up and builds it (release); the executable.
pub fn build() -> Result<PathBuf> {
    let root = crate::root();
    let copy = copy_dir();
    remove(&copy)?;
    copy_crate(&root.join("examples/own-kernel"), &copy, &root)?;

    // The README's first step. It finds the toolkit this repository's setup
    // put in memplan's per-user cache (or the installed one it linked to),
    // as a second crate on a user's machine does.
    println!("own-kernel: memplan-setup {}", copy.display());
    run_command(
        cargo()
            .args([
                "run",
                "--quiet",
                "-p",
                "memplan-build",
                "--bin",
                "memplan-setup",
                "--",
            ])
            .arg(&copy),
    )?;
    same_toolkit(&root.join(".cuda/toolkit"), &copy.join(".cuda/toolkit"))?;
    // The second: a plain build.
    run_command(outside_cargo().args(["build", "--release", "--quiet"]))?;
    Ok(target_dir().join("release/own-kernel"))
}

/// Builds the example, runs its tests (its plan checked against a model
/// of a GPU, which needs none), and runs it with `cargo run`, as its
/// README says (which finds the driver stub on a machine without a
/// driver): without a GPU it says so and exits 0.
pub fn run() -> Result {
    build()?;
    run_command(outside_cargo().args(["test", "--release", "--quiet"]))?;
    run_command(outside_cargo().args(["run", "--release", "--quiet"]))
}

/// What a user sees of a kernel declaration that does not match its C++,
/// in a crate that builds its own kernels: an ordinary error at the
/// declaration (the macro predicts the check's message from the
/// signatures the build step wrote, and rustc confirms it), and through a
/// path that names another image of that name, that image's verdict, not
/// the prediction. Built from the copy with its `main.rs` changed; the
/// file is put back whatever happens.
pub fn declaration_errors() -> Result {
    let main = copy_dir().join("src/main.rs");
    let original = fs::read_to_string(&main).map_err(|e| e.to_string())?;
    let result = check_declaration_errors(&main, &original);
    fs::write(&main, &original).map_err(|e| format!("cannot put back {}: {e}", main.display()))?;
    result
}

fn check_declaration_errors(main: &Path, original: &str) -> Result {
    let edit = |text: &str, from: &str, to: &str| {
        if text.contains(from) {
            Ok(text.replacen(from, to, 1))
        } else {
            Err(format!(
                "examples/own-kernel no longer has `{from}`: update xtask's own_kernel.rs"
            ))
        }
    };
    // `blur.cu` says the kernel only reads `input`.
    let written = edit(
        original,
        "input: &[f32; width * height * count]",
        "input: &mut [f32; width * height * count]",
    )?;
    let elsewhere = |image: &str| {
        let with_image = edit(
            &written,
            "memplan::include_kernels!();",
            &format!(
                "memplan::include_kernels!();\nmod other {{\n    pub static BLUR: memplan::Image = {image};\n}}"
            ),
        )?;
        edit(&with_image, ") from BLUR;", ") from other::BLUR;")
    };
    let message = "parameter `input` is written (`&mut`/`&out`) in the declaration, and its \
                   source says the kernel only reads it";
    let cases = [
        (
            "the crate's own image",
            written.clone(),
            Some(format!("error[E0277]: {message}")),
        ),
        // Not built by memplan-build: it cannot be checked, whatever this
        // crate's `BLUR` says.
        (
            "an image of another origin named BLUR",
            elsewhere("unsafe { memplan::Image::from_static(&[]) }")?,
            Some("error[E0080]: evaluation panicked: `other::BLUR` does not list its kernels' parameters".to_owned()),
        ),
        // Built without nvcc: it accepts every declaration.
        (
            "an image built without nvcc named BLUR",
            elsewhere("memplan::Image::unbuilt(&[])")?,
            None,
        ),
    ];
    for (case, text, expected) in cases {
        fs::write(main, text).map_err(|e| e.to_string())?;
        let output = outside_cargo()
            .args(["build", "--release", "--quiet", "--color", "never"])
            .output()
            .map_err(|e| format!("cannot start cargo: {e}"))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let fail = |why: &str| {
            Err(format!(
                "own-kernel, declaration through {case}: {why}:\n{stderr}"
            ))
        };
        match expected {
            None if !output.status.success() => return fail("it does not compile"),
            None => {}
            Some(_) if output.status.success() => return fail("it compiles"),
            Some(expected) => {
                // One error, at the declaration's name.
                let at_name = stderr
                    .split_once(&expected)
                    .and_then(|(_, after)| after.lines().nth(3))
                    .is_some_and(|line| line.trim_end().ends_with("kernel box_blur("));
                if !at_name {
                    return fail(&format!("no `{expected}` at `kernel box_blur`"));
                }
                if stderr.matches("error[").count() != 1 || stderr.contains("error: `") {
                    return fail("more than that one error");
                }
            }
        }
        println!("own-kernel: a mismatched declaration through {case}: as expected");
    }
    Ok(())
}

/// Fails unless both links lead to one toolkit: one download per machine.
fn same_toolkit(repository: &Path, copy: &Path) -> Result {
    let resolve = |link: &Path| {
        link.canonicalize()
            .map_err(|e| format!("cannot follow {}: {e}", link.display()))
    };
    let (ours, theirs) = (resolve(repository)?, resolve(copy)?);
    if ours == theirs {
        Ok(())
    } else {
        Err(format!(
            "the outside crate's toolkit is {}, not the repository's {}: \
             memplan-setup should reuse the one toolkit of this machine",
            theirs.display(),
            ours.display()
        ))
    }
}

/// A cargo in the copy with none of this repository's environment.
fn outside_cargo() -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .current_dir(copy_dir())
        .env("CARGO_TARGET_DIR", target_dir());
    for variable in REPOSITORY_ENV {
        cargo.env_remove(variable);
    }
    cargo
}

/// The crate at `from` without what a build leaves (`target/`, `.cuda/`,
/// `.cargo/`), with `../..` in its manifest replaced by `repository`. Its
/// `.gitignore` goes too, as a user's crate has one.
fn copy_crate(from: &Path, to: &Path, repository: &Path) -> Result {
    fs::create_dir_all(to.join("src")).map_err(|e| e.to_string())?;
    let manifest = fs::read_to_string(from.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let absolute = repository.display().to_string();
    fs::write(
        to.join("Cargo.toml"),
        manifest.replace("\"../..", &format!("\"{absolute}")),
    )
    .map_err(|e| e.to_string())?;
    for file in ["build.rs", ".gitignore"] {
        fs::copy(from.join(file), to.join(file)).map_err(|e| format!("cannot copy {file}: {e}"))?;
    }
    for entry in fs::read_dir(from.join("src")).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() {
            let name = path.file_name().ok_or("a file without a name")?;
            fs::copy(&path, to.join("src").join(name)).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
