//! What nvcc's own compilation says of a kernel, where memplan would
//! otherwise read text: which function its name denotes, and its
//! parameter types in every GPU architecture's compilation.
//!
//! A probing source includes the kernel's source, takes the address of
//! the kernel's name (`decltype(&::a::k)`; for a kernel of an anonymous
//! namespace, `decltype(&k)` inside it), and instantiates a kernel
//! template, `__memplan_probe<I, A0, A1, ...>`, with the parameter types
//! of the function found, for kernel number `I`. That compiles only where
//! the name denotes one function: an overload, or a `__device__` function
//! of the same name, makes the address ambiguous. Each architecture's PTX
//! names the instance by nvcc's mangling of the types it compiled, which
//! must be the kernel's own types, as read from its stub, for every
//! architecture. Then the function found is the kernel, and a contract
//! read from the declarations of its name is the kernel's.
//!
//! The types matter apart from the contracts too: a kernel's parameters
//! are read from its host stub's mangled name, which nvcc's front end
//! writes after one architecture's compilation (see [`crate::cudafe`]). A
//! C++ kernel's symbol is that mangled name, so an architecture that
//! compiled other types (a typedef chosen by `__CUDA_ARCH__`) has no
//! kernel of that symbol, and loading it fails. An `extern "C"` kernel's
//! symbol is its bare name, which every image has whatever types it was
//! compiled with: a `double *` read from one architecture could be a
//! `float *` in another's image.

use crate::demangle::{Function, demangle};
use crate::spelling::{self, Spelled};
use std::fmt::Write as _;
use std::path::Path;

/// A source that includes `source` and probes `kernels`, each by its name
/// and number of parameters. What it defines it defines before the
/// include, out of reach of the source's macros; what it writes after,
/// [`spelling::unexpanded`] makes sure no macro of the source rewrites.
pub fn probing_source(source: &Path, kernels: &[(&Spelled, usize)]) -> String {
    let mut text = format!(
        "// Written by memplan-build: the kernels of {}, as this architecture\n\
         // compiles them.\n",
        source.display()
    );
    let mut arities: Vec<usize> = kernels.iter().map(|(_, arity)| *arity).collect();
    arities.sort_unstable();
    arities.dedup();
    // A template of each arity, so that the instance's mangled name lists
    // the types as its template arguments, which `T0_` and its kin refer to.
    for arity in arities {
        let classes: String = (0..arity).map(|at| format!(", class A{at}")).collect();
        let params: Vec<String> = (0..arity).map(|at| format!("A{at}")).collect();
        writeln!(
            text,
            "template <int I{classes}> __global__ void __memplan_probe({}) {{}}",
            params.join(", ")
        )
        .unwrap();
    }
    writeln!(
        text,
        "template <int I, class... P> void __memplan_probe_of(void (*)(P...)) {{\n    \
         (void)&__memplan_probe<I, P...>;\n}}\n#include \"{}\"",
        source.display()
    )
    .unwrap();
    let aliases: Vec<String> = (0..kernels.len()).map(alias).collect();
    let written = [
        "template",
        "void",
        "decltype",
        "using",
        "namespace",
        "__memplan_probe_of",
    ];
    let names = kernels
        .iter()
        .flat_map(|(spelled, _)| spelled.scopes.iter().flatten().chain([&spelled.name]));
    text.push_str(&spelling::unexpanded(
        written
            .iter()
            .copied()
            .chain(aliases.iter().map(String::as_str))
            .chain(names.map(String::as_str)),
    ));
    for (index, (spelled, _)) in kernels.iter().enumerate() {
        let alias = &aliases[index];
        if spelled.scopes.is_empty() {
            writeln!(text, "using {alias} = decltype(&::{});", spelled.name).unwrap();
        } else {
            for scope in &spelled.scopes {
                write!(text, "namespace {} {{ ", scope.as_deref().unwrap_or("")).unwrap();
            }
            write!(text, "using {alias} = decltype(&{});", spelled.name).unwrap();
            writeln!(text, "{}", " }".repeat(spelled.scopes.len())).unwrap();
        }
        writeln!(
            text,
            "template void __memplan_probe_of<{index}>(::{}{alias});",
            spelled.path()
        )
        .unwrap();
    }
    text
}

/// The name of the type of kernel number `index`'s address.
fn alias(index: usize) -> String {
    format!("__memplan_kernel_{index}")
}

/// Each probe of `ptx` (the PTX of a probing source), in order, read as a
/// function: its parameters are what the architecture compiled kernel
/// number `I` with.
pub fn read_ptx(ptx: &str, count: usize) -> Result<Vec<Function>, String> {
    (0..count)
        .map(|index| {
            // `_Z15__memplan_probeILi3EPKfPfiEvT0_T1_T2_`: the `E` ends the
            // number, so probe 1 is not the start of probe 10.
            let start = format!("_Z15__memplan_probeILi{index}E");
            let name = ptx
                .lines()
                .filter_map(|line| Some(line.split_once(".entry ")?.1))
                .map(|entry| entry.trim().trim_end_matches('(').trim())
                .find(|name| name.starts_with(&start))
                .ok_or_else(|| format!("nvcc's PTX has no probe {index}"))?;
            demangle(name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spelling::spelled;

    #[test]
    fn the_probing_source_finds_each_kernel_where_it_is() {
        let vadd = spelled("vadd").unwrap();
        let anon = spelled("a::_GLOBAL__N_1::k").unwrap();
        let source = probing_source(Path::new("/k/vadd.cu"), &[(&vadd, 4), (&anon, 0)]);
        let include = source.find("#include \"/k/vadd.cu\"").unwrap();
        assert!(
            source
                .find("template <int I, class A0, class A1, class A2, class A3> __global__ void __memplan_probe(A0, A1, A2, A3) {}")
                .unwrap()
                < include
        );
        assert!(source.contains("template <int I> __global__ void __memplan_probe() {}"));
        assert!(source.contains("#ifdef vadd\n"));
        assert!(source.contains("#ifdef __memplan_kernel_1\n"));
        assert!(source.contains(
            "using __memplan_kernel_0 = decltype(&::vadd);\n\
             template void __memplan_probe_of<0>(::__memplan_kernel_0);"
        ));
        assert!(source.contains(
            "namespace a { namespace  { using __memplan_kernel_1 = decltype(&k); } }\n\
             template void __memplan_probe_of<1>(::a::__memplan_kernel_1);"
        ));
    }

    #[test]
    fn reads_each_probe_by_its_number() {
        // As nvcc 13.0 writes them: the template's name is a substitution
        // of its own, so `S1_` here is the kernel's `S0_`.
        let ptx = ".visible .entry _Z4vaddPKfS0_Pfi(\n\
                   .visible .entry _Z15__memplan_probeILi10EPKfS1_PfiEvT0_T1_T2_T3_(\n\
                   .visible .entry _Z15__memplan_probeILi1EPN2ns4PairEPKS1_S1_iEvT0_T1_T2_T3_(\n";
        let probes = read_ptx(ptx, 2);
        assert!(probes.is_err(), "probe 0 is missing: {probes:?}");
        let probes = read_ptx(&ptx.replace("ILi10E", "ILi0E"), 2).unwrap();
        assert_eq!(
            probes[0].params,
            demangle("_Z4vaddPKfS0_Pfi").unwrap().params
        );
        assert_eq!(
            probes[1].params,
            demangle("_Z2ppPN2ns4PairEPKS0_S0_i").unwrap().params
        );
    }
}
