//! Compiles every `src/*.cu` with nvcc into a fatbin and embeds each one as an
//! `Image` named after its file (`vector_add.cu` -> `VECTOR_ADD`).
//!
//! Each fatbin holds machine code (SASS) for sm_80 and sm_90 and PTX for
//! compute_90, so Ampere and Hopper load it without JIT and newer GPUs JIT the
//! PTX. nvcc comes from `MEMPLAN_CUDA_HOME`, which `.cargo/config.toml` points
//! at the folder `cargo xtask setup` fills.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, exit};

/// Code generation targets: SASS where we know the GPUs, PTX for the rest.
const GENCODE: &[&str] = &[
    "arch=compute_80,code=sm_80",
    "arch=compute_90,code=[sm_90,compute_90]",
];

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let src_dir = manifest_dir.join("src");

    println!("cargo:rerun-if-env-changed=MEMPLAN_CUDA_HOME");
    println!("cargo:rerun-if-changed={}", src_dir.display());

    let nvcc = find_nvcc().unwrap_or_else(|message| fail(&message));
    let sources = cuda_sources(&src_dir).unwrap_or_else(|e| fail(&e));

    // nvcc is single-threaded and takes about a second a file: compile in parallel.
    let results: Vec<Result<Kernel, String>> = std::thread::scope(|scope| {
        let jobs: Vec<_> = sources
            .iter()
            .map(|source| scope.spawn(|| compile(&nvcc, source, &src_dir, &out_dir)))
            .collect();
        jobs.into_iter().map(|job| job.join().unwrap()).collect()
    });
    let kernels: Vec<Kernel> = results
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| fail(&e));

    fs::write(out_dir.join("kernels.rs"), generate_rust(&kernels))
        .unwrap_or_else(|e| fail(&format!("cannot write kernels.rs: {e}")));
}

/// One compiled `.cu` file.
struct Kernel {
    /// File stem, `vector_add`.
    stem: String,
    /// The `extern "C" __global__` functions it defines.
    entry_points: Vec<String>,
    fatbin: PathBuf,
    fatbin_len: u64,
}

fn find_nvcc() -> Result<PathBuf, String> {
    let help = "help: run `cargo xtask setup` once: it installs NVIDIA's CUDA 13.0 compiler \
                into .cuda/ (or links the toolkit this machine already has)";
    let Some(home) = env::var_os("MEMPLAN_CUDA_HOME") else {
        return Err(format!(
            "memplan-kernels needs nvcc, and MEMPLAN_CUDA_HOME is not set \
             (.cargo/config.toml sets it when cargo runs inside the memplan workspace)\n{help}"
        ));
    };
    let nvcc = Path::new(&home).join("bin").join("nvcc");
    if nvcc.is_file() {
        Ok(nvcc)
    } else {
        Err(format!(
            "memplan-kernels needs nvcc, and there is none at {}\n{help}",
            nvcc.display()
        ))
    }
}

fn cuda_sources(src_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        fs::read_dir(src_dir).map_err(|e| format!("cannot list {}: {e}", src_dir.display()))?;
    let mut sources = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let extension = path.extension().and_then(|e| e.to_str());
        if matches!(extension, Some("cu" | "cuh")) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        if extension == Some("cu") {
            sources.push(path);
        }
    }
    sources.sort();
    Ok(sources)
}

fn compile(
    nvcc: &Path,
    source: &Path,
    include_dir: &Path,
    out_dir: &Path,
) -> Result<Kernel, String> {
    let stem = source.file_stem().unwrap().to_string_lossy().into_owned();
    let fatbin = out_dir.join(format!("{stem}.fatbin"));
    let mut command = Command::new(nvcc);
    command.arg("-fatbin").arg("-O3").arg("-I").arg(include_dir);
    for gencode in GENCODE {
        command.arg("-gencode").arg(gencode);
    }
    command.arg("-o").arg(&fatbin).arg(source);

    let output = command
        .output()
        .map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
    if !output.status.success() {
        return Err(format!(
            "nvcc failed on {}:\n{}{}",
            source.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = fs::read_to_string(source).map_err(|e| e.to_string())?;
    let fatbin_len = fs::metadata(&fatbin).map_err(|e| e.to_string())?.len();
    Ok(Kernel {
        stem,
        entry_points: entry_points(&text),
        fatbin,
        fatbin_len,
    })
}

/// Names of the `extern "C" __global__` functions in a source file, for the docs.
fn entry_points(source: &str) -> Vec<String> {
    source
        .split("__global__")
        .skip(1)
        .filter_map(|rest| {
            let before_paren = rest.split('(').next()?;
            before_paren.split_whitespace().last().map(str::to_owned)
        })
        .collect()
}

fn generate_rust(kernels: &[Kernel]) -> String {
    let mut rust = String::new();
    for kernel in kernels {
        let name = kernel.stem.to_uppercase();
        let aligned = format!("{name}_ALIGNED");
        let entry_points = kernel
            .entry_points
            .iter()
            .map(|e| format!("`{e}`"))
            .collect::<Vec<_>>()
            .join(", ");
        writeln!(
            rust,
            "/// Fatbin of `src/{stem}.cu`; kernels: {entry_points}.\n\
             // SAFETY: nvcc wrote these bytes (just above, in build.rs), and\n\
             // `Aligned` aligns them to 16.\n\
             pub static {name}: Image = unsafe {{ Image::from_static(&{aligned}.0) }};\n\
             static {aligned}: Aligned<[u8; {len}]> = Aligned(*include_bytes!({path:?}));\n",
            stem = kernel.stem,
            len = kernel.fatbin_len,
            path = kernel.fatbin,
        )
        .unwrap();
    }
    let all = kernels
        .iter()
        .map(|k| format!("({:?}, &{})", k.stem, k.stem.to_uppercase()))
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(
        rust,
        "/// Every module, by file stem.\npub static ALL: &[(&str, &Image)] = &[{all}];"
    )
    .unwrap();
    rust
}

/// Build scripts report through stderr and the exit status; a panic would bury
/// the message under a backtrace hint.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    exit(1)
}
