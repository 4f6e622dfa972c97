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
    let agree = crate::contracts_agree(&settings, &source, &compiled);
    let found = cudafe::kernels(&compiled.host_code).unwrap();
    let classes = layout::classes(found.iter().filter_map(|k| k.function.as_ref().ok()));
    let layouts = crate::measure(&settings, &source, &classes, &work);
    let _ = std::fs::remove_dir_all(&work);
    Read {
        found,
        agree,
        layouts,
    }
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
