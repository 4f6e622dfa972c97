//! The contract reader and the layout measure on nvcc's real output: the
//! fixtures in `tests/fixtures/` compiled as a build compiles them. These
//! need nvcc, which `cargo xtask setup` provisions (`MEMPLAN_CUDA_HOME`);
//! without it they fail, saying so, rather than pass unrun.

use crate::contract::{Access, Lookup};
use crate::{cudafe, layout, nvcc};
use std::path::{Path, PathBuf};

struct Read {
    found: Vec<cudafe::Found>,
    agree: Result<(), String>,
    layouts: layout::Layouts,
}

fn read(fixture: &str) -> Read {
    read_unchecked(fixture).unwrap()
}

/// As [`read`], with the build's error where reading the kernels is one.
fn read_unchecked(fixture: &str) -> Result<Read, String> {
    let nvcc = nvcc::find().expect("these tests need nvcc: run `cargo xtask setup`");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let work = std::env::temp_dir().join(format!(
        "memplan-build-test-{}-{fixture}",
        std::process::id()
    ));
    let header = work.join("include");
    crate::write_header(&header).unwrap();
    let includes: Vec<PathBuf> = vec![fixtures.clone(), header];
    let gencode = crate::Kernels::new().gencode();
    let architectures = [80, 90];
    let settings = nvcc::Settings {
        nvcc: &nvcc,
        includes: &includes,
        flags: &[],
        gencode: &gencode,
        architectures: &architectures,
    };
    let source = fixtures.join(fixture);
    let compiled = nvcc::compile(&settings, &source, &work).unwrap();
    let agree = crate::contracts_agree(&compiled);
    let found = cudafe::kernels(&compiled.host_code);
    let classes = match &found {
        Ok(found) => layout::classes(found.iter().filter_map(|k| k.function.as_ref().ok())),
        Err(_) => Vec::new(),
    };
    let layouts = crate::measure(&settings, &source, &classes, &work);
    let _ = std::fs::remove_dir_all(&work);
    Ok(Read {
        found: found?,
        agree,
        layouts,
    })
}

fn lookup<'a>(read: &'a Read, name: &str) -> &'a Lookup {
    let kernel = read
        .found
        .iter()
        .find(|k| k.function.as_ref().is_ok_and(|f| f.name == name))
        .unwrap_or_else(|| panic!("no kernel `{name}`"));
    &kernel.contracts
}

fn accesses(lookup: &Lookup) -> Vec<Option<(Access, String)>> {
    match lookup {
        Lookup::Found(found) => found
            .params
            .iter()
            .map(|c| c.as_ref().map(|c| (c.access, c.text.clone())))
            .collect(),
        other => panic!("expected contracts, got {other:?}"),
    }
}

#[test]
fn each_kernel_takes_its_own_contracts_and_no_others() {
    let read = read("mixup.cu");
    assert_eq!(read.agree, Ok(()));
    let reads = |text: &str| Some((Access::Reads, text.to_owned()));
    let writes = |text: &str| Some((Access::Writes, text.to_owned()));
    assert_eq!(accesses(lookup(&read, "a::k")), [reads("n"), None]);
    assert_eq!(lookup(&read, "b::k"), &Lookup::None);
    assert_eq!(lookup(&read, "fill"), &Lookup::None);
    assert_eq!(accesses(lookup(&read, "fill<float>")), [writes("n"), None]);
    assert_eq!(
        accesses(lookup(&read, "sc<float>")),
        [reads("n"), writes("n"), None]
    );
    assert_eq!(lookup(&read, "sc<double>"), &Lookup::None);
    assert_eq!(
        accesses(lookup(&read, "sc<int>")),
        [reads("2 * n"), writes("2 * n"), None]
    );
    assert_eq!(lookup(&read, "touch"), &Lookup::None);
    assert_eq!(accesses(lookup(&read, "dflt")), [writes("n"), None]);
    let anon = read
        .found
        .iter()
        .find(|k| k.symbol.contains("4anonEPfi"))
        .expect("the anonymous namespace's kernel");
    assert_eq!(accesses(&anon.contracts), [writes("n"), None]);
    assert_eq!(accesses(lookup(&read, "proto")), [reads("count"), None]);
}

#[test]
fn a_contract_that_reads_otherwise_for_a_gpu_stops_the_build() {
    let error = read("tiled.cu").agree.unwrap_err();
    assert!(error.contains("compiled for compute_90"), "{error}");
    assert!(error.contains("\"128 * n\""), "{error}");
}

#[test]
fn a_class_nvcc_cannot_measure_has_no_layout() {
    let read = read("opaque.cu");
    assert!(read.layouts.is_empty(), "{:?}", read.layouts);
    assert!(matches!(lookup(&read, "opaque"), Lookup::Found(_)));
}

#[test]
fn a_specialization_spelled_with_spaces_or_several_arguments_has_its_own() {
    let read = read("specialized_by_spelling.cu");
    assert_eq!(read.agree, Ok(()));
    let writes = |text: &str| Some((Access::Writes, text.to_owned()));
    assert_eq!(
        accesses(lookup(&read, "sc<long long>")),
        [writes("8 * n"), None]
    );
    assert_eq!(lookup(&read, "sc<unsigned long>"), &Lookup::None);
    assert_eq!(lookup(&read, "k2<float, int>"), &Lookup::None);
    // nvcc prints `unsigned` where the demangler says `unsigned int`: the
    // instance may be the specialization, so it takes no contract.
    assert!(matches!(
        lookup(&read, "ku<unsigned int>"),
        Lookup::Ambiguous(_)
    ));
    assert_eq!(accesses(lookup(&read, "sc<float>")), [writes("n"), None]);
}

#[test]
fn a_specialization_defined_outside_its_namespace_has_its_own() {
    let read = read("specialized_outside_its_namespace.cu");
    assert_eq!(lookup(&read, "ns::sc<int>"), &Lookup::None);
    assert!(matches!(lookup(&read, "ns::sc<float>"), Lookup::Found(_)));
}

#[test]
fn two_templates_of_one_name_take_no_contract() {
    let read = read("twin_templates.cu");
    assert!(matches!(
        lookup(&read, "pick<float, 4>"),
        Lookup::Ambiguous(_)
    ));
    assert!(matches!(lookup(&read, "pick<float>"), Lookup::Ambiguous(_)));
}

#[test]
fn separators_and_raw_strings_do_not_blind_the_comparison() {
    let error = read("separators.cu").agree.unwrap_err();
    assert!(error.contains("\"128 * n\""), "{error}");
}

#[test]
fn the_comparison_is_with_the_fatbins_own_compilation() {
    // The fatbin is compiled with -O3 (`__OPTIMIZE__`), and so is the
    // host code contracts are read from: they agree, on 128 * n.
    let read = read("optimized.cu");
    assert_eq!(read.agree, Ok(()));
    let writes = Some((Access::Writes, "128 * n".to_owned()));
    assert_eq!(accesses(lookup(&read, "tiled")), [writes, None]);
}

#[test]
fn default_arguments_do_not_shift_the_names() {
    let read = read("defaults.cu");
    let Lookup::Found(found) = lookup(&read, "shifted") else {
        panic!("expected contracts");
    };
    assert_eq!(found.names, ["in", "w", "n", "big", "out"]);
    let out = found.params[4].as_ref().unwrap();
    assert_eq!(out.program, [crate::contract::Term::Param(2)]);
}

#[test]
fn two_contracts_on_one_parameter_stop_the_build() {
    let error = read_unchecked("two_markers.cu").err().unwrap();
    assert!(error.contains("has 2 contracts"), "{error}");
}

#[test]
fn contracts_in_other_places_of_a_parameter_and_blocks() {
    let read = read("placements.cu");
    let writes = |text: &str| Some((Access::Writes, text.to_owned()));
    for name in ["after", "mid", "arr", "ns::ool", "cpp_block"] {
        assert_eq!(accesses(lookup(&read, name)), [writes("n"), None], "{name}");
    }
    assert_eq!(lookup(&read, "ool"), &Lookup::None);
}
