//! The files a build writes: the Rust file, one `pub static` image per
//! source, its kernels' signatures beside its bytes, and the list of all
//! of them; and the signatures alone, for `memplan!` to read.

use crate::cudafe::Found;
use crate::layout::Layouts;
use crate::params::{cpp_declaration, rust_contracts, rust_params};
use std::fmt::Write as _;
use std::path::Path;

/// A compiled source, ready to be written out.
pub struct Module<'a> {
    /// The source file, for the documentation.
    pub source: &'a Path,
    /// The fatbin to embed; `None` for a build without nvcc.
    pub fatbin: Option<(&'a Path, u64)>,
    pub kernels: &'a [Found],
    /// The classes its kernels take, measured.
    pub layouts: &'a Layouts,
}

/// The name of the static for `source`: `box-blur.cu` is `BOX_BLUR`.
pub fn static_name(source: &Path) -> String {
    let stem = source
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    name
}

/// The file, with the runtime's items named through `runtime`.
pub fn rust_file(modules: &[Module], runtime: &str, targets: &str) -> String {
    let mut rust =
        String::from("// Written by memplan-build: the kernels of this crate's CUDA sources.\n\n");
    for module in modules {
        write_module(&mut rust, module, runtime, targets);
    }
    let all: Vec<String> = modules
        .iter()
        .map(|m| format!("({:?}, &{})", static_name(m.source), static_name(m.source)))
        .collect();
    writeln!(
        rust,
        "/// Every module of this crate, by name.\n\
         pub static ALL_MODULES: &[(&str, &{runtime}::Image)] = &[{}];",
        all.join(", ")
    )
    .unwrap();
    rust
}

fn write_module(rust: &mut String, module: &Module, runtime: &str, targets: &str) {
    let name = static_name(module.source);
    let file = module
        .source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    match module.fatbin {
        Some(_) => writeln!(rust, "/// The kernels of `{file}` ({targets}):").unwrap(),
        None => writeln!(
            rust,
            "/// The kernels of `{file}`, built without nvcc: loading fails (see \
             [`Image::unbuilt`]({runtime}::Image::unbuilt))."
        )
        .unwrap(),
    }
    for kernel in module.kernels {
        match &kernel.function {
            Ok(function) => writeln!(
                rust,
                "/// - `{}`",
                cpp_declaration(function, kernel.extern_c, kernel.contracts())
            ),
            Err(_) => writeln!(rust, "/// - `{}` (parameters not read)", kernel.symbol),
        }
        .unwrap();
    }
    let signatures: Vec<String> = module
        .kernels
        .iter()
        .map(|kernel| signature(kernel, module.layouts, runtime))
        .collect();
    let kernels = format!("&[{}]", signatures.join(",\n        "));
    match module.fatbin {
        Some((path, len)) => writeln!(
            rust,
            "pub static {name}: {runtime}::Image = {{\n    \
             static BYTES: {runtime}::Aligned<[u8; {len}]> = {runtime}::Aligned(*include_bytes!({path:?}));\n    \
             // SAFETY: nvcc wrote these bytes in this build, and its front end\n    \
             // declared these kernels with these parameters.\n    \
             unsafe {{ {runtime}::Image::from_build(&BYTES.0, {kernels}) }}\n}};\n",
        ),
        None => writeln!(
            rust,
            "pub static {name}: {runtime}::Image = {runtime}::Image::unbuilt(&[]);\n"
        ),
    }
    .unwrap();
}

/// [`SIGNATURES`](crate::SIGNATURES): the signatures of every image built
/// with nvcc, written as the Rust file writes them, in a Rust array of
/// `(name, signatures)` that `memplan!` parses (never compiles) to word
/// the errors of a declaration that does not match, before rustc
/// confirms them (see the runtime's `declaration.rs`), behind a first
/// line that seals it. Images built without nvcc accept every
/// declaration, and are not listed.
pub fn signatures_file(modules: &[Module], runtime: &str) -> String {
    let mut body = String::from("[\n");
    for module in modules.iter().filter(|module| module.fatbin.is_some()) {
        let signatures: Vec<String> = module
            .kernels
            .iter()
            .map(|kernel| signature(kernel, module.layouts, runtime))
            .collect();
        writeln!(
            body,
            "({:?}, &[{}]),",
            static_name(module.source),
            signatures.join(",\n    ")
        )
        .unwrap();
    }
    body.push_str("]\n");
    // The macro reads only a sealed file: any other text might not be
    // tokens, which rustc's lexer would report at the macro's call.
    memplan_model::signatures_file::seal(&body)
}

fn signature(kernel: &Found, layouts: &Layouts, runtime: &str) -> String {
    let (name, params, cpp) = match &kernel.function {
        Ok(function) => (
            function.name.clone(),
            format!("Some({})", rust_params(function, layouts, runtime)),
            cpp_declaration(function, kernel.extern_c, kernel.contracts()),
        ),
        Err(why) => (kernel.symbol.clone(), "None".to_owned(), why.clone()),
    };
    let contracts = rust_contracts(kernel.contracts(), runtime);
    let forms = |forms: &[(u32, bool)]| {
        let forms: Vec<String> = forms.iter().map(|(a, w)| format!("({a}, {w})")).collect();
        format!("&[{}]", forms.join(", "))
    };
    let waits_first = format!(
        "{runtime}::WaitsFirst {{ machine_code: {}, ptx: {} }}",
        forms(&kernel.waits_first.machine_code),
        forms(&kernel.waits_first.ptx)
    );
    format!(
        "{runtime}::KernelSignature {{ symbol: {:?}, name: {name:?}, params: {params}, \
         contracts: {contracts}, cpp: {cpp:?}, waits_first: {waits_first} }}",
        kernel.symbol
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_identifiers() {
        assert_eq!(static_name(Path::new("src/box-blur.cu")), "BOX_BLUR");
        assert_eq!(static_name(Path::new("vector_add.cu")), "VECTOR_ADD");
        assert_eq!(static_name(Path::new("3d.cu")), "_3D");
    }
}
