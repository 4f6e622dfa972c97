//! What nvcc's own compilation says of a kernel, where memplan would
//! otherwise read text: that its name denotes one function, and that every
//! GPU architecture compiles it with the same parameter types.
//!
//! A probing source includes the kernel's source and, for kernel number
//! `I`, instantiates a kernel template, `__memplan_probe<I, P...>`, with
//! the parameters of `&::name` as each compilation sees them
//! (`decltype`, never a spelling of ours). That compiles only where the
//! name denotes one function: an overload, or a `__device__` function of
//! the same name, makes `&::name` ambiguous. A contract is read from the
//! declarations of the kernel's name; where the name is one function,
//! they are all the kernel's.
//!
//! The types: a kernel's parameters are read from its host stub's mangled
//! name, which nvcc's front end writes after one architecture's
//! compilation (see [`crate::cudafe`]). A C++ kernel's symbol is that
//! mangled name, so an architecture that compiled other types (a typedef
//! chosen by `__CUDA_ARCH__`) has no kernel of that symbol, and loading
//! it fails. An `extern "C"` kernel's symbol is its bare name, which every
//! image has whatever types it was compiled with: a `double *` read from
//! one architecture could be a `float *` in another's image. Each
//! architecture's PTX names the probe by nvcc's mangling of the types it
//! compiled, and the names must be the same for all.

use crate::spelling;
use std::fmt::Write as _;
use std::path::Path;

/// A source that includes `source` and probes `kernels`, each by its name
/// as [`spelling::spelled`]. What it defines it defines before the
/// include, out of reach of the source's macros; what it writes after,
/// [`spelling::unexpanded`] makes sure no macro of the source rewrites.
pub fn probing_source(source: &Path, kernels: &[&str]) -> String {
    let mut text = format!(
        "// Written by memplan-build: the kernels of {0}, as this architecture\n\
         // compiles them.\n\
         template <int I, class... P> __global__ void __memplan_probe(P...) {{}}\n\
         template <int I, class... P> void __memplan_probe_of(void (*)(P...)) {{\n    \
         (void)&__memplan_probe<I, P...>;\n}}\n#include \"{0}\"\n",
        source.display()
    );
    let written = ["template", "void", "decltype", "__memplan_probe_of"];
    text.push_str(&spelling::unexpanded(written.iter().chain(kernels)));
    for (index, kernel) in kernels.iter().enumerate() {
        writeln!(
            text,
            "template void __memplan_probe_of<{index}>(decltype(&::{kernel}));"
        )
        .unwrap();
    }
    text
}

/// The mangled name of each probe in `ptx` (the PTX of a probing source),
/// in order: what the architecture compiled kernel number `I` with.
pub fn read_ptx(ptx: &str, count: usize) -> Result<Vec<String>, String> {
    (0..count)
        .map(|index| {
            // `_Z15__memplan_probeILi3EJPKfPfiEEvDpT0_`: the `E` ends the
            // number, so probe 1 is not the start of probe 10.
            let start = format!("_Z15__memplan_probeILi{index}E");
            ptx.lines()
                .filter_map(|line| Some(line.split_once(".entry ")?.1))
                .map(|entry| entry.trim().trim_end_matches('(').trim())
                .find(|name| name.starts_with(&start))
                .map(str::to_owned)
                .ok_or_else(|| format!("nvcc's PTX has no probe {index}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probing_source_names_each_kernel_from_the_top() {
        let source = probing_source(Path::new("/k/vadd.cu"), &["vadd", "a::k"]);
        let include = source.find("#include \"/k/vadd.cu\"").unwrap();
        assert!(source.find("__memplan_probe(P...)").unwrap() < include);
        assert!(source.contains("#ifdef vadd\n"));
        assert!(source.contains("#ifdef decltype\n"));
        assert!(source.contains("template void __memplan_probe_of<0>(decltype(&::vadd));"));
        assert!(source.contains("template void __memplan_probe_of<1>(decltype(&::a::k));"));
    }

    #[test]
    fn reads_each_probe_by_its_number() {
        // As nvcc 13.0 writes them.
        let ptx = ".visible .entry k(\n\
                   .visible .entry _Z15__memplan_probeILi10EJPdiEEvDpT0_(\n\
                   .visible .entry _Z15__memplan_probeILi1EJPKfPfiEEvDpT0_(\n";
        let names = read_ptx(ptx, 2);
        assert!(names.is_err(), "probe 0 is missing: {names:?}");
        let names = read_ptx(&ptx.replace("ILi10E", "ILi0E"), 2).unwrap();
        assert_eq!(
            names,
            [
                "_Z15__memplan_probeILi0EJPdiEEvDpT0_",
                "_Z15__memplan_probeILi1EJPKfPfiEEvDpT0_"
            ]
        );
    }
}
