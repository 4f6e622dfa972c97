//! Compiles a crate's CUDA kernels for memplan, from its build script.
//!
//! Each `.cu` file becomes a fatbin, embedded in the crate as an
//! [`Image`](https://docs.rs/memplan-runtime/latest/memplan_runtime/struct.Image.html)
//! named after the file (`blur.cu` is `BLUR`), with every kernel's C++
//! signature as nvcc's front end declared it and the contracts its source
//! states (`MEMPLAN_READS(n) const float *a`, from [`HEADER`]): plans'
//! `kernel` declarations are checked against both while your program
//! compiles.
//!
//! `build.rs`, whose `main` is this one line:
//!
//! ```no_run
//! memplan_build::Kernels::new().build(); // every .cu file in src/
//! ```
//!
//! `src/lib.rs` (or any module):
//!
//! ```text
//! memplan::include_kernels!(); // pub static BLUR: memplan::Image, ...
//! ```
//!
//! # What it does
//! - Finds nvcc in the toolkit `memplan-setup` provisions
//!   (`MEMPLAN_CUDA_HOME`), `CUDA_PATH`, `/usr/local/cuda`, or `PATH`; or
//!   stops with one message saying what to install or run.
//! - Compiles the sources in parallel, each into a fatbin with machine code
//!   for sm_80 and sm_90 and PTX for compute_90 unless told otherwise
//!   ([`machine_code`](Kernels::machine_code), [`ptx`](Kernels::ptx)), and
//!   reruns when a source or any header it includes changes.
//! - Reads each kernel's parameters from the mangled name nvcc gives its
//!   host stub, for `extern "C"` and C++ kernels alike (templates
//!   explicitly instantiated included): the compiler's own reading of the
//!   declaration as the GPU compiles it, typedefs resolved, never a parse
//!   of the source. Every architecture must compile an `extern "C"`
//!   kernel with the same types, else it has no safe declaration.
//! - Puts `memplan.cuh` ([`HEADER`]) on the include path and reads each
//!   pointer parameter's contract from the declarations nvcc's front end
//!   prints, where its macros become attributes: what the kernel does with
//!   the pointer and how many elements it touches. A contract that cannot
//!   be true of its kernel (a write through a `const` pointer, an extent
//!   naming anything but the kernel's integer parameters) stops the build.
//!   A kernel takes the contracts of its name's declarations only where
//!   nvcc finds that name to be one function, and every compilation reads
//!   them alike; else it takes none, and the build says why.
//! - Asks all of it of compilations alike: every nvcc run compiles the same
//!   file, which includes the source, for the same architectures, so the
//!   source sees the same predefined macros in the fatbin's compilation as
//!   in those that read its kernels, probe them and measure their classes.
//! - Reads from the PTX each architecture's code is compiled from which
//!   kernels wait for the work before them before they touch memory
//!   (`memplan_wait_for_previous()`, `cudaGridDependencySynchronize()`):
//!   the runtime launches those early on GPUs that run proved code.
//! - Measures the size and alignment of every class a kernel takes by
//!   value or points to (`float4`, `struct Window`) with nvcc, for the
//!   checks that match Rust types with them.
//! - Writes the signatures again beside the images ([`SIGNATURES`]), for
//!   `memplan!` to word the errors of declarations that disagree with
//!   them as ordinary compiler errors (rustc's check of the images
//!   decides).
//! - With `DOCS_RS` set, or `MEMPLAN_NO_NVCC=1` (an explicit opt-out for
//!   machines without a toolkit), writes stand-ins instead: the crate and
//!   its plans compile, and loading a module says it was built without
//!   nvcc.

#![warn(missing_docs)]

mod contract;
mod cudafe;
mod demangle;
mod emit;
mod layout;
mod nvcc;
mod params;
mod probe;
pub mod setup;
mod spelling;
mod waits;
#[cfg(test)]
mod with_nvcc;

use demangle::CType;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::exit;

/// The name of the file a build writes into `OUT_DIR`, which
/// `include_kernels!` includes.
pub const OUTPUT: &str = "memplan_kernels.rs";

/// The name of the file, beside [`OUTPUT`], with the kernels' signatures
/// alone, which `memplan!` reads to word the errors of declarations that
/// do not match them (rustc's own check of the images decides).
pub const SIGNATURES: &str = memplan_model::signatures_file::FILE;

/// A build of a crate's kernels: what to compile, and how.
#[derive(Clone, Debug)]
pub struct Kernels {
    sources: Vec<PathBuf>,
    source_dirs: Vec<PathBuf>,
    /// Whether `source_dirs` is still the default, `src/`.
    default_dir: bool,
    includes: Vec<PathBuf>,
    flags: Vec<String>,
    machine_code: Vec<u32>,
    ptx: Vec<u32>,
    runtime: String,
}

impl Default for Kernels {
    fn default() -> Self {
        Self::new()
    }
}

impl Kernels {
    /// Every `.cu` file in the crate's `src/` (not its subfolders), with
    /// `src/` on the include path, for sm_80 and sm_90 with PTX for
    /// compute_90, named through the `memplan` crate.
    pub fn new() -> Kernels {
        Kernels {
            sources: Vec::new(),
            source_dirs: vec![PathBuf::from("src")],
            default_dir: true,
            includes: Vec::new(),
            flags: Vec::new(),
            machine_code: vec![80, 90],
            ptx: vec![90],
            runtime: "::memplan".to_owned(),
        }
    }

    /// Compiles the `.cu` files of `dir` (relative to the crate, and on
    /// the include path). Naming any folder or file replaces the default,
    /// `src/`; call again for more.
    pub fn source_dir(mut self, dir: impl Into<PathBuf>) -> Kernels {
        self.forget_the_default();
        self.source_dirs.push(dir.into());
        self
    }

    /// Compiles this file (relative to the crate); its folder joins the
    /// include path. Replaces the default, `src/`, as `source_dir` does.
    pub fn file(mut self, path: impl Into<PathBuf>) -> Kernels {
        self.forget_the_default();
        let path = path.into();
        if let Some(dir) = path.parent() {
            self.includes.push(dir.to_path_buf());
        }
        self.sources.push(path);
        self
    }

    fn forget_the_default(&mut self) {
        if self.default_dir {
            self.source_dirs.clear();
            self.default_dir = false;
        }
    }

    /// Adds a folder to the include path (the source folders are on it).
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Kernels {
        self.includes.push(dir.into());
        self
    }

    /// Passes `flag` to nvcc (`-DTILE=16`, `--use_fast_math`). Flags that
    /// choose GPU architectures (`-arch`, `-gencode`, `-code`), pass
    /// options to the fatbin's packer (`-Xfatbin`) or read more flags from
    /// a file stop the build, here or in `NVCC_PREPEND_FLAGS` and
    /// `NVCC_APPEND_FLAGS`: the architectures are
    /// [`machine_code`](Kernels::machine_code) and [`ptx`](Kernels::ptx),
    /// which memplan-build checks each kernel for.
    pub fn flag(mut self, flag: impl Into<String>) -> Kernels {
        self.flags.push(flag.into());
        self
    }

    /// Machine code for these GPU architectures (`80` is sm_80), instead
    /// of sm_80 and sm_90.
    pub fn machine_code(mut self, architectures: &[u32]) -> Kernels {
        self.machine_code = architectures.to_vec();
        self
    }

    /// PTX for these virtual architectures (`90` is compute_90), which
    /// newer GPUs compile when the module loads, instead of compute_90.
    pub fn ptx(mut self, architectures: &[u32]) -> Kernels {
        self.ptx = architectures.to_vec();
        self
    }

    /// The path the generated code names memplan's types through:
    /// `::memplan` unless the crate depends on `memplan-runtime` alone.
    pub fn runtime_path(mut self, path: impl Into<String>) -> Kernels {
        self.runtime = path.into();
        self
    }

    /// Builds, for a build script: on failure prints the reason and exits,
    /// as Cargo shows a build script's output only when it fails.
    pub fn build(self) {
        if let Err(message) = self.try_build() {
            eprintln!("error: {message}");
            exit(1);
        }
    }

    /// Builds, writing `OUT_DIR/memplan_kernels.rs`; the error says what
    /// went wrong and what to do.
    pub fn try_build(self) -> Result<(), String> {
        let manifest_dir = env_path("CARGO_MANIFEST_DIR")?;
        let out_dir = env_path("OUT_DIR")?;
        let more = [
            "MEMPLAN_NO_NVCC",
            "DOCS_RS",
            "NVCC_PREPEND_FLAGS",
            "NVCC_APPEND_FLAGS",
        ];
        for variable in nvcc::ENV.iter().chain(&more) {
            println!("cargo:rerun-if-env-changed={variable}");
        }
        let sources = self.sources(&manifest_dir)?;
        if self.architectures().is_empty() {
            return Err(
                "no GPU architecture to compile for: give `machine_code` or `ptx` at \
                        least one"
                    .to_owned(),
            );
        }
        // nvcc adds these variables' flags to every run.
        let added: Vec<String> = ["NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"]
            .iter()
            .filter_map(env::var_os)
            .flat_map(|flags| {
                flags
                    .to_string_lossy()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        if let Some(flag) = self
            .flags
            .iter()
            .chain(&added)
            .find(|f| chooses_architectures(f))
        {
            return Err(format!(
                "the nvcc flag `{flag}` (given to `flag`, or in NVCC_PREPEND_FLAGS or \
                 NVCC_APPEND_FLAGS) would put code in the fatbin that memplan-build does not \
                 check the kernels against: give the architectures with `machine_code` and `ptx`"
            ));
        }
        let targets = self.targets();
        let (rust, signatures) = if stand_ins_wanted() {
            let no_layouts = layout::Layouts::new();
            let modules: Vec<emit::Module> = sources
                .iter()
                .map(|source| emit::Module {
                    source,
                    fatbin: None,
                    kernels: &[],
                    layouts: &no_layouts,
                })
                .collect();
            (
                emit::rust_file(&modules, &self.runtime, &targets),
                emit::signatures_file(&modules, &self.runtime),
            )
        } else {
            let nvcc = nvcc::find().ok_or_else(no_nvcc)?;
            self.compile_all(&nvcc, &manifest_dir, &out_dir, &sources, &targets)?
        };
        for (name, text) in [(SIGNATURES, signatures), (OUTPUT, rust)] {
            let output = out_dir.join(name);
            fs::write(&output, text)
                .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
        }
        Ok(())
    }

    fn compile_all(
        &self,
        nvcc: &Path,
        manifest_dir: &Path,
        out_dir: &Path,
        sources: &[PathBuf],
        targets: &str,
    ) -> Result<(String, String), String> {
        let work = out_dir.join("memplan-build");
        let header_dir = work.join("include");
        write_header(&header_dir)?;
        // memplan.cuh first: a copy of it beside the sources (for builds by
        // other means) never stands in for the one this build reads.
        let includes: Vec<PathBuf> = [header_dir]
            .into_iter()
            .chain(
                self.source_dirs
                    .iter()
                    .chain(&self.includes)
                    .map(|dir| manifest_dir.join(dir)),
            )
            .collect();
        let gencode = self.gencode();
        let architectures = self.architectures();
        let settings = nvcc::Settings {
            nvcc,
            includes: &includes,
            flags: &self.flags,
            gencode: &gencode,
            architectures: &architectures,
        };
        let (machine_code, ptx) = (&self.machine_code[..], &self.ptx[..]);
        let read = in_parallel(sources, |index, source| {
            let out = work.join(format!("{index}"));
            let compiled = nvcc::compile(&settings, source, &out)?;
            let in_source = |e: String| format!("{}: {e}", source.display());
            compiled_for(&compiled, &architectures).map_err(in_source)?;
            contracts_agree(&compiled).map_err(in_source)?;
            let mut found = cudafe::kernels(&compiled.host_code, &compiled.preprocessed())
                .map_err(in_source)?;
            probe_kernels(&settings, source, &mut found, &out);
            let waiting = waits::waiting_by_architecture(&compiled.device_ptx);
            for kernel in &mut found {
                kernel.waits_first = waits::Forms::of(&kernel.symbol, &waiting, machine_code, ptx);
            }
            for kernel in &found {
                if let contract::Lookup::Ambiguous(why) = &kernel.contracts {
                    println!(
                        "cargo:warning={}: {why}; it takes no contract (declare it `unsafe \
                         kernel`, or give the kernels different names)",
                        source.display()
                    );
                }
            }
            let classes = layout::classes(found.iter().filter_map(|k| k.function.as_ref().ok()));
            let layouts = measure(&settings, source, &classes, &out);
            Ok::<_, String>((compiled, found, layouts))
        });
        let read: Vec<(nvcc::Compiled, Vec<cudafe::Found>, layout::Layouts)> =
            read.into_iter().collect::<Result<_, _>>()?;
        let mut lens = Vec::with_capacity(read.len());
        for (source, (compiled, ..)) in sources.iter().zip(&read) {
            for dependency in &compiled.dependencies {
                println!("cargo:rerun-if-changed={}", dependency.display());
            }
            println!("cargo:rerun-if-changed={}", source.display());
            let len = fs::metadata(&compiled.fatbin)
                .map_err(|e| format!("cannot read {}: {e}", compiled.fatbin.display()))?
                .len();
            lens.push(len);
        }
        let modules: Vec<emit::Module> = sources
            .iter()
            .zip(&read)
            .zip(&lens)
            .map(|((source, (compiled, found, layouts)), len)| emit::Module {
                source,
                fatbin: Some((compiled.fatbin.as_path(), *len)),
                kernels: found,
                layouts,
            })
            .collect();
        Ok((
            emit::rust_file(&modules, &self.runtime, targets),
            emit::signatures_file(&modules, &self.runtime),
        ))
    }

    /// Every architecture of the build, real or virtual, oldest first,
    /// without repeats.
    fn architectures(&self) -> Vec<u32> {
        let mut all: Vec<u32> = self.machine_code.iter().chain(&self.ptx).copied().collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The sources: listed files, then each folder's `.cu` files sorted.
    fn sources(&self, manifest_dir: &Path) -> Result<Vec<PathBuf>, String> {
        let mut sources: Vec<PathBuf> = self
            .sources
            .iter()
            .map(|file| manifest_dir.join(file))
            .collect();
        for dir in &self.source_dirs {
            let dir = manifest_dir.join(dir);
            // A new file in the folder is a new module.
            println!("cargo:rerun-if-changed={}", dir.display());
            let entries = fs::read_dir(&dir)
                .map_err(|e| format!("cannot list the CUDA sources in {}: {e}", dir.display()))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .filter(|path| path.extension().is_some_and(|ext| ext == "cu"))
                .collect();
            found.sort();
            sources.extend(found);
        }
        let mut names: Vec<String> = sources.iter().map(|s| emit::static_name(s)).collect();
        names.sort();
        if let Some(twice) = names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(format!(
                "two CUDA sources would both be the module `{}`: rename one",
                twice[0]
            ));
        }
        Ok(sources)
    }

    fn gencode(&self) -> Vec<String> {
        let machine = self
            .machine_code
            .iter()
            .map(|sm| format!("arch=compute_{sm},code=sm_{sm}"));
        let ptx = self
            .ptx
            .iter()
            .map(|compute| format!("arch=compute_{compute},code=compute_{compute}"));
        machine.chain(ptx).collect()
    }

    /// `machine code for sm_80, sm_90; PTX for compute_90`, for the docs.
    fn targets(&self) -> String {
        let list = |prefix: &str, archs: &[u32]| {
            archs
                .iter()
                .map(|a| format!("{prefix}_{a}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (self.machine_code.is_empty(), self.ptx.is_empty()) {
            (false, false) => format!(
                "machine code for {}; PTX for {}",
                list("sm", &self.machine_code),
                list("compute", &self.ptx)
            ),
            (false, true) => format!("machine code for {}", list("sm", &self.machine_code)),
            (true, _) => format!("PTX for {}", list("compute", &self.ptx)),
        }
    }
}

/// Whether an nvcc flag chooses GPU architectures, passes options to the
/// fatbin's packer, or reads flags from a file that might.
fn chooses_architectures(flag: &str) -> bool {
    const CHOOSING: &[&str] = &[
        "-arch",
        "--gpu-architecture",
        "-gencode",
        "--generate-code",
        "-code",
        "--gpu-code",
        "-optf",
        "--options-file",
        // What goes into the fatbin besides what nvcc compiled.
        "-Xfatbin",
        "--fatbin-options",
    ];
    let name = flag.split('=').next().unwrap_or(flag);
    CHOOSING.contains(&name)
}

/// That nvcc compiled the fatbin for `architectures` and no others, as
/// every check of a kernel's types is made for those.
fn compiled_for(compiled: &nvcc::Compiled, architectures: &[u32]) -> Result<(), String> {
    let mut kept: Vec<&str> = compiled
        .device_preprocessed
        .iter()
        .map(|(architecture, _)| architecture.as_str())
        .collect();
    let mut asked: Vec<String> = architectures
        .iter()
        .map(|a| format!("compute_{a}"))
        .collect();
    kept.sort_unstable();
    asked.sort_unstable();
    if kept != asked {
        return Err(format!(
            "nvcc compiled the fatbin for {kept:?}, where memplan-build asked for {asked:?}"
        ));
    }
    Ok(())
}

/// That `source`'s contracts read the same in its fatbin's compilation
/// for each GPU architecture as in the host's, where they are read (see
/// [`contract::agree`]); a source without contracts needs no comparing.
fn contracts_agree(compiled: &nvcc::Compiled) -> Result<(), String> {
    let host = contract::agree::annotated(&compiled.host_preprocessed)?;
    if host.is_empty() {
        return Ok(());
    }
    if compiled.device_preprocessed.is_empty() {
        return Err(
            "nvcc kept no preprocessed source of the fatbin's compilation, which \
                    the contracts are compared with"
                .to_owned(),
        );
    }
    for (architecture, text) in &compiled.device_preprocessed {
        let device = contract::agree::annotated(text)?;
        contract::agree::same(&host, &device, &format!("for {architecture}"))?;
    }
    Ok(())
}

/// What nvcc says of the kernels of `found` (see [`probe`]), for every
/// architecture of the build: all at once, and where that fails, one at
/// a time. A kernel with contracts whose name nvcc does not find to be
/// the kernel takes none; an `extern "C"` kernel whose types differ
/// between architectures, or could not be compared, keeps no parameters,
/// so no safe declaration matches it. The build says which.
fn probe_kernels(
    settings: &nvcc::Settings,
    source: &Path,
    found: &mut [cudafe::Found],
    out: &Path,
) {
    let several = settings.architectures.len() > 1;
    let probed: Vec<(usize, Option<spelling::Spelled>)> = found
        .iter()
        .enumerate()
        .filter(|(_, kernel)| kernel.function.is_ok())
        .filter(|(_, kernel)| kernel.contracts().is_some() || (kernel.extern_c && several))
        .map(|(index, kernel)| {
            (
                index,
                kernel.qualified.as_deref().and_then(spelling::spelled),
            )
        })
        .collect();
    let arity = |index: usize| found[index].function.as_ref().map_or(0, |f| f.params.len());
    // Each probe's parameters, by architecture.
    let attempt =
        |kernels: &[(&spelling::Spelled, usize)]| -> Result<Vec<Vec<Vec<CType>>>, String> {
            let probing = probe::probing_source(source, kernels);
            nvcc::device_ptx(settings, source, "probe", &probing, out)?
                .iter()
                .map(|ptx| {
                    let probes = probe::read_ptx(ptx, kernels.len())?;
                    Ok(probes.into_iter().map(|probe| probe.params).collect())
                })
                .collect()
        };
    let spelled: Vec<(&spelling::Spelled, usize)> = probed
        .iter()
        .filter_map(|(index, name)| Some((name.as_ref()?, arity(*index))))
        .collect();
    let together = attempt(&spelled).ok();
    let mut next = 0;
    let mut verdicts = Vec::with_capacity(probed.len());
    for (index, name) in &probed {
        // The kernel's parameters as each architecture compiled the
        // function its name denotes; `None` where nvcc found no one
        // function.
        let by_architecture: Option<Vec<Vec<CType>>> = name.as_ref().and_then(|name| {
            let at = next;
            next += 1;
            match &together {
                Some(all) => Some(all.iter().map(|probes| probes[at].clone()).collect()),
                None => attempt(&[(name, arity(*index))])
                    .ok()
                    .map(|all| all.into_iter().map(|mut probes| probes.remove(0)).collect()),
            }
        });
        verdicts.push((*index, by_architecture));
    }
    for (index, by_architecture) in verdicts {
        let kernel = &mut found[index];
        let shown = kernel
            .qualified
            .clone()
            .unwrap_or_else(|| kernel.symbol.clone());
        let read = &kernel
            .function
            .as_ref()
            .expect("probed kernels were read")
            .params;
        let differing = by_architecture.as_ref().and_then(|all| {
            all.iter()
                .position(|params| params != &all[0])
                .map(|at| settings.architectures[at])
        });
        let why = match (&by_architecture, differing) {
            (Some(all), None) if all.iter().all(|params| params == read) => continue,
            (Some(_), Some(architecture)) => format!(
                "compute_{} and compute_{architecture} compile `{shown}` with different \
                 parameter types (a type chosen by `__CUDA_ARCH__`?), so no one declaration \
                 is true of it",
                settings.architectures[0]
            ),
            // nvcc found no function by the name, more than one, or
            // another than the kernel.
            _ => {
                if kernel.contracts().is_some() {
                    kernel.contracts = contract::Lookup::Ambiguous(format!(
                        "`{shown}`: nvcc does not find the kernel alone by its name (an \
                         overload, a `__device__` function of the same name), so memplan \
                         cannot tell which declarations are the kernel's"
                    ));
                }
                if !(kernel.extern_c && several) {
                    continue;
                }
                format!(
                    "nvcc could not compare the parameter types of `{shown}` between the \
                     build's GPU architectures (is its name overloaded?)"
                )
            }
        };
        println!("cargo:warning={}: {why}", source.display());
        kernel.function = Err(why);
    }
}

/// The layouts of `classes`, measured by nvcc for every architecture of
/// the build: all at once, and where that fails (a class the file's top
/// level cannot name), one at a time. A class that cannot be measured, or
/// whose layout differs between architectures, has no layout, so no Rust
/// type matches it; the build says which.
fn measure(
    settings: &nvcc::Settings,
    source: &Path,
    classes: &[String],
    out: &Path,
) -> layout::Layouts {
    let attempt = |classes: &[String]| -> Result<layout::Layouts, String> {
        let measuring = layout::measuring_source(source, classes);
        let mut agreed: Option<layout::Layouts> = None;
        let ptx = nvcc::device_ptx(settings, source, "layouts", &measuring, out)?;
        for (ptx, &architecture) in ptx.iter().zip(settings.architectures) {
            let measured = layout::read_ptx(ptx, classes)?;
            agreed = Some(match agreed {
                None => measured,
                Some(earlier) => earlier
                    .into_iter()
                    .filter(|(class, layout)| {
                        let same = measured.get(class) == Some(layout);
                        if !same {
                            println!(
                                "cargo:warning={}: `{class}` is laid out differently for \
                                 compute_{architecture}, so no Rust type matches it",
                                source.display()
                            );
                        }
                        same
                    })
                    .collect(),
            });
        }
        Ok(agreed.unwrap_or_default())
    };
    if classes.is_empty() {
        return layout::Layouts::new();
    }
    if let Ok(layouts) = attempt(classes) {
        return layouts;
    }
    let mut layouts = layout::Layouts::new();
    for class in classes {
        match attempt(std::slice::from_ref(class)) {
            Ok(measured) => layouts.extend(measured),
            Err(_) => println!(
                "cargo:warning={}: nvcc could not measure `{class}`, so no Rust type matches \
                 it (kernels that take it are declared `unsafe kernel`)",
                source.display()
            ),
        }
    }
    layouts
}

/// `memplan.cuh`, the header of kernel contracts (`MEMPLAN_READS(n)` and
/// its kin), which every build puts on nvcc's include path. Outside
/// memplan-build its macros expand to nothing; a build of the same sources
/// by other means can include a copy of this text.
pub const HEADER: &str = include_str!("../include/memplan.cuh");

fn write_header(dir: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("memplan.cuh");
    // Written only when it changed, so that nvcc's dependency list does not
    // rerun the build for a header that is the same.
    if fs::read_to_string(&path).is_ok_and(|text| text == HEADER) {
        return Ok(());
    }
    fs::write(&path, HEADER).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Whether to write stand-ins rather than run nvcc.
fn stand_ins_wanted() -> bool {
    env::var_os("DOCS_RS").is_some() || env::var("MEMPLAN_NO_NVCC").is_ok_and(|v| v == "1")
}

fn no_nvcc() -> String {
    format!(
        "memplan-build needs nvcc, the CUDA compiler, and found none (looked in {}).\n\
         help: install the CUDA toolkit, or run `memplan-setup` in this project once \
         (it provisions NVIDIA's compiler and points the build at it); to build without \
         kernels, which then fail to load, set MEMPLAN_NO_NVCC=1",
        nvcc::SEARCHED
    )
}

fn env_path(name: &str) -> Result<PathBuf, String> {
    env::var_os(name)
        .map(PathBuf::from)
        .ok_or_else(|| format!("{name} is not set: memplan-build runs in a build script"))
}

/// `job` for each item, on as many threads as the machine has cores,
/// results in order.
fn in_parallel<T: Sync, R: Send>(items: &[T], job: impl Fn(usize, &T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(index) else {
                            return done;
                        };
                        done.push((index, job(index, item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("a compile thread panicked"))
            .collect()
    });
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_that_choose_architectures_are_refused() {
        for flag in [
            "-gencode=arch=compute_90,code=sm_90",
            "-gencode",
            "--generate-code=arch=compute_90,code=sm_90",
            "-arch=sm_90",
            "--gpu-architecture",
            "-code=sm_90",
            "--gpu-code=sm_90",
            "-optf",
            "--options-file=more.txt",
        ] {
            assert!(chooses_architectures(flag), "{flag}");
        }
        assert!(chooses_architectures("-Xfatbin"));
        for flag in ["-DTILE=16", "--use_fast_math", "-lineinfo", "-archive"] {
            assert!(!chooses_architectures(flag), "{flag}");
        }
    }

    #[test]
    fn targets_default_to_ampere_and_hopper_with_ptx() {
        let kernels = Kernels::new();
        assert_eq!(
            kernels.gencode(),
            [
                "arch=compute_80,code=sm_80",
                "arch=compute_90,code=sm_90",
                "arch=compute_90,code=compute_90"
            ]
        );
        assert_eq!(
            kernels.targets(),
            "machine code for sm_80, sm_90; PTX for compute_90"
        );
        let ptx_only = Kernels::new().machine_code(&[]).ptx(&[100]);
        assert_eq!(ptx_only.targets(), "PTX for compute_100");
    }

    #[test]
    fn parallel_results_keep_their_order() {
        let squares = in_parallel(&[1, 2, 3, 4, 5, 6, 7], |_, x| x * x);
        assert_eq!(squares, [1, 4, 9, 16, 25, 36, 49]);
        assert!(in_parallel(&[] as &[u8], |_, x| *x).is_empty());
    }
}
