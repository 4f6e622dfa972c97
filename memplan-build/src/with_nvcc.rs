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
    read_unchecked_keeping(fixture, |_| {})
}

/// What a build of the fixtures compiles with: nvcc, the fixtures' folder
/// and memplan.cuh on the include path, the default architectures, and a
/// folder of its own named `name`.
struct Build {
    nvcc: PathBuf,
    fixtures: PathBuf,
    includes: Vec<PathBuf>,
    gencode: Vec<String>,
    architectures: [u32; 2],
    work: PathBuf,
}

impl Build {
    fn new(name: &str) -> Build {
        let nvcc = nvcc::find().expect("these tests need nvcc: run `cargo xtask setup`");
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let work =
            std::env::temp_dir().join(format!("memplan-build-test-{}-{name}", std::process::id()));
        let header = work.join("include");
        crate::write_header(&header).unwrap();
        Build {
            nvcc,
            includes: vec![fixtures.clone(), header],
            fixtures,
            gencode: crate::Kernels::new().gencode(),
            architectures: [80, 90],
            work,
        }
    }

    fn settings(&self) -> nvcc::Settings<'_> {
        nvcc::Settings {
            nvcc: &self.nvcc,
            includes: &self.includes,
            flags: &[],
            gencode: &self.gencode,
            architectures: &self.architectures,
        }
    }
}

/// As [`read_unchecked`], letting `look` see the build's folder first.
fn read_unchecked_keeping(fixture: &str, look: impl FnOnce(&Path)) -> Result<Read, String> {
    let build = Build::new(fixture);
    let (settings, work, architectures) = (build.settings(), &build.work, &build.architectures);
    let fixtures = &build.fixtures;
    let source = fixtures.join(fixture);
    let compiled = nvcc::compile(&settings, &source, work).unwrap();
    crate::compiled_for(&compiled, architectures).unwrap();
    let agree = crate::contracts_agree(&compiled);
    let mut found = cudafe::kernels(&compiled.host_code, &compiled.preprocessed());
    if let Ok(found) = &mut found {
        crate::probe_kernels(&settings, &source, found, work);
    }
    let classes = match &found {
        Ok(found) => layout::classes(found.iter().filter_map(|k| k.function.as_ref().ok())),
        Err(_) => Vec::new(),
    };
    let layouts = crate::measure(&settings, &source, &classes, work);
    look(work);
    let _ = std::fs::remove_dir_all(work);
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
fn a_kernel_takes_contracts_only_where_its_name_is_its_own() {
    let read = read("mixup.cu");
    assert_eq!(read.agree, Ok(()));
    let reads = |text: &str| Some((Access::Reads, text.to_owned()));
    let writes = |text: &str| Some((Access::Writes, text.to_owned()));
    // Names shared with another namespace's kernel, a template and a plain
    // kernel, specializations, a `__device__` function: no contract.
    for name in [
        "a::k",
        "b::k",
        "fill",
        "fill<float>",
        "sc<float>",
        "sc<double>",
        "sc<int>",
        "touch",
    ] {
        assert!(
            matches!(lookup(&read, name), Lookup::Ambiguous(_)),
            "{name}: {:?}",
            lookup(&read, name)
        );
    }
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
fn declarations_a_scan_could_misplace_make_a_shared_name_take_none() {
    let read = read("shared_names.cu");
    for name in [
        "sc<int>",
        "sc<float>",
        "ns::sp<S>",
        "ns::sp<ns::S>",
        "c::r",
        "c::c::r",
        "dp",
    ] {
        assert!(
            matches!(lookup(&read, name), Lookup::Ambiguous(_)),
            "{name}: {:?}",
            lookup(&read, name)
        );
    }
    let writes = Some((Access::Writes, "n".to_owned()));
    assert_eq!(accesses(lookup(&read, "alone")), [writes, None]);
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
fn specializations_however_spelled_make_their_template_take_none() {
    let spelled = read("specialized_by_spelling.cu");
    assert_eq!(spelled.agree, Ok(()));
    for name in [
        "sc<long long>",
        "sc<unsigned long>",
        "sc<float>",
        "k2<float, int>",
        "ku<unsigned int>",
        "kc<unsigned int>",
    ] {
        assert!(
            matches!(lookup(&spelled, name), Lookup::Ambiguous(_)),
            "{name}: {:?}",
            lookup(&spelled, name)
        );
    }
    let outside = read("specialized_outside_its_namespace.cu");
    for name in ["ns::sc<int>", "ns::sc<float>"] {
        assert!(
            matches!(lookup(&outside, name), Lookup::Ambiguous(_)),
            "{name}"
        );
    }
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
    assert_eq!(out.program, [memplan_model::ExtentTerm::Param(2)]);
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
    for name in ["after", "mid", "arr", "cpp_block"] {
        assert_eq!(accesses(lookup(&read, name)), [writes("n"), None], "{name}");
    }
    // `ns::ool` and `::ool` share a name.
    assert!(matches!(lookup(&read, "ns::ool"), Lookup::Ambiguous(_)));
    assert!(matches!(lookup(&read, "ool"), Lookup::Ambiguous(_)));
}

#[test]
fn what_a_fourth_read_found_takes_no_contract_or_its_own() {
    let read = read("fourth_read.cu");
    for name in ["k", "t<float>", "sc<float>", "ns::sp<float>", "a::k5"] {
        assert!(
            matches!(lookup(&read, name), Lookup::Ambiguous(_)),
            "{name}: {:?}",
            lookup(&read, name)
        );
    }
    let reads = Some((Access::Reads, "n".to_owned()));
    assert_eq!(accesses(lookup(&read, "k2")), [reads, None]);
    // k4<float>: its own contract on `q`, by `m`, or none.
    match lookup(&read, "k4<float>") {
        Lookup::Found(found) => {
            let q = found.params[2].as_ref().expect("q's contract");
            assert_eq!(
                (q.access, q.program.as_slice()),
                (Access::Writes, &[memplan_model::ExtentTerm::Param(4)][..])
            );
            assert!(
                found
                    .params
                    .iter()
                    .enumerate()
                    .all(|(i, c)| c.is_none() == (i != 2))
            );
        }
        other => assert!(matches!(other, Lookup::Ambiguous(_)), "{other:?}"),
    }
}

#[test]
fn a_specialization_only_a_gpu_compilation_sees_stops_the_build() {
    let error = read("device_specialization.cu").agree.unwrap_err();
    assert!(error.contains("sc<int>"), "{error}");
}

#[test]
fn what_a_fifth_read_found_takes_no_contract() {
    for (fixture, name) in [
        ("fifth_scope.cu", "a::k"),
        ("fifth_mangled_spelling.cu", "k"),
        ("fifth_template.cu", "t<int>"),
        // Read as text, one function's declarations; nvcc finds two.
        ("overloaded_by_scope.cu", "a::k"),
    ] {
        let read = read(fixture);
        assert!(
            matches!(lookup(&read, name), Lookup::Ambiguous(_)),
            "{fixture}: {:?}",
            lookup(&read, name)
        );
    }
}

fn kernel<'a>(read: &'a Read, symbol: &str) -> &'a cudafe::Found {
    read.found
        .iter()
        .find(|k| k.symbol == symbol)
        .unwrap_or_else(|| panic!("no kernel `{symbol}`"))
}

#[test]
fn an_extern_c_kernels_types_are_the_devices_and_the_same_for_every_gpu() {
    use crate::demangle::{Builtin, CType};
    // Host `float`, device `double`: the stub nvcc names reads the device's.
    let host_float = read("fifth_arch_type.cu");
    assert_eq!(host_float.agree, Ok(()));
    let k = kernel(&host_float, "k");
    let double = |konst| {
        CType::Pointer(Box::new(if konst {
            CType::Qualified {
                konst: true,
                volatile: false,
                restrict: false,
                inner: Box::new(CType::Builtin(Builtin::Double)),
            }
        } else {
            CType::Builtin(Builtin::Double)
        }))
    };
    assert_eq!(
        k.function.as_ref().unwrap().params[..2],
        [double(true), double(false)]
    );
    assert!(matches!(k.contracts, Lookup::Found(_)), "{:?}", k.contracts);

    let by_gpu = read("arch_types.cu");
    let differs = kernel(&by_gpu, "differs");
    let why = differs.function.as_ref().unwrap_err();
    assert!(why.contains("compute_80 and compute_90"), "{why}");
    let overloaded = kernel(&by_gpu, "overloaded");
    assert!(
        overloaded
            .function
            .as_ref()
            .unwrap_err()
            .contains("could not compare")
    );
    assert!(kernel(&by_gpu, "nested").function.is_ok());
    // A C++ kernel's symbol would be missing from one image; the build
    // says so first.
    let mangled = by_gpu.found.iter().find(|k| !k.extern_c).unwrap();
    assert!(
        mangled
            .function
            .as_ref()
            .unwrap_err()
            .contains("compute_80 and compute_90")
    );
}

#[test]
fn a_kernel_in_a_namespace_takes_its_contracts_whatever_the_spelling() {
    // Classes and typedefs of the namespace, `const ::E *`, `unsigned int`:
    // nvcc prints them otherwise in its definition, and they are the same.
    let read = read("namespaced.cu");
    assert_eq!(read.agree, Ok(()));
    let writes = |text: &str| Some((Access::Writes, text.to_owned()));
    assert_eq!(
        accesses(lookup(&read, "ns::k")),
        [writes("n"), None, None, None]
    );
    assert_eq!(accesses(lookup(&read, "kc")), [writes("n"), None, None]);
    assert_eq!(accesses(lookup(&read, "top")), [writes("n"), None, None]);
}

#[test]
fn the_sources_macros_do_not_rename_what_is_probed_or_measured() {
    let read = read("macros.cu");
    // `&::a::k` would read `&::a::one`, one function.
    assert!(
        matches!(lookup(&read, "a::k"), Lookup::Ambiguous(_)),
        "{:?}",
        lookup(&read, "a::k")
    );
    // `Small` would measure as `Big`.
    assert!(!read.layouts.contains_key("Small"), "{:?}", read.layouts);
}

#[test]
fn a_name_finds_the_kernel_itself_or_the_kernel_takes_nothing() {
    // A kernel of an anonymous namespace, where `::k` finds another `k`:
    // the contract is on the anonymous `float *` overload nvcc prints
    // like the kernel.
    let decoy = read("anonymous_decoy.cu");
    let k = decoy
        .found
        .iter()
        .find(|k| k.symbol.ends_with("1kEPdi"))
        .expect("the anonymous kernel");
    assert!(
        matches!(k.contracts, Lookup::Ambiguous(_)),
        "{:?}",
        k.contracts
    );
    // An `extern "C"` one whose types differ between architectures, with
    // a host function `::k` that does not.
    let extern_c = read("anonymous_extern_c.cu");
    let k = kernel(&extern_c, "k");
    assert!(k.function.is_err(), "{:?}", k.function);
}

#[test]
fn template_arguments_keep_their_types() {
    let read = read("typed_literals.cu");
    // `V<4u>` is measured as itself, not as `V<4>`.
    assert_eq!(
        read.layouts.get("V<4u>"),
        Some(&layout::Layout {
            size: 512,
            align: 8
        }),
        "{:?}",
        read.layouts
    );
    let writes = Some((Access::Writes, "n".to_owned()));
    for name in ["k", "tc<(char)65>", "tb<true>", "te<(E)1>"] {
        assert_eq!(
            accesses(lookup(&read, name)),
            [writes.clone(), None],
            "{name}"
        );
    }
}

#[test]
fn a_specialization_for_the_gpu_alone_stops_the_build_however_hidden() {
    for fixture in [
        "specialized_in_a_linkage_block.cu",
        "specialized_behind_an_attribute.cu",
    ] {
        let read = read_unchecked(fixture);
        let taken = read.as_ref().ok().and_then(|read| {
            let t = lookup(read, "t<int>");
            (read.agree.is_ok() && matches!(t, Lookup::Found(_))).then_some(t)
        });
        assert!(taken.is_none(), "{fixture}: {taken:?}");
    }
}

#[test]
fn every_compilation_sees_the_fatbins_macros() {
    // `__INCLUDE_LEVEL__` is the same in the probe as in the fatbin, so a
    // decoy declaration only one of them sees is in neither.
    let decoy = read("include_level_decoy.cu");
    let k = decoy
        .found
        .iter()
        .find(|k| k.symbol.ends_with("1kEPdi"))
        .expect("the anonymous kernel");
    assert!(k.contracts().is_none(), "{:?}", k.contracts);
    // `__CUDA_ARCH_LIST__` too: both compile for every architecture.
    let listed = read("arch_list_arch_type.cu");
    let k = kernel(&listed, "k");
    assert!(
        k.function
            .as_ref()
            .is_err_and(|why| why.contains("compute_80 and compute_90")),
        "{:?}",
        k.function
    );
    // The parameter read (`long long`) is the one the fatbin's compute_80
    // image takes, not a struct's bytes.
    let read = read_unchecked_keeping("include_level_arch_type.cu", |work| {
        let ptx = std::fs::read_to_string(work.join("device/memplan.compute_80.ptx")).unwrap();
        assert!(ptx.contains(".param .u64 k_param_0"), "{ptx}");
    })
    .unwrap();
    let k = kernel(&read, "k");
    assert_eq!(
        k.function.as_ref().unwrap().params[0],
        crate::demangle::CType::Builtin(crate::demangle::Builtin::LongLong)
    );
}

#[test]
fn the_least_value_of_a_type_names_its_own_class() {
    let read = read("least_literals.cu");
    let layout = |class: &str| read.layouts.get(class).map(|l| l.size);
    assert_eq!(
        layout("V<(-2147483647 - 1)>"),
        Some(512),
        "{:?}",
        read.layouts
    );
    assert_eq!(
        layout("V<(-9223372036854775807ll - 1)>"),
        Some(256),
        "{:?}",
        read.layouts
    );
}

#[test]
fn a_folder_another_source_compiled_in_is_not_read_as_this_ones() {
    // Sources are numbered by their order: a new file that sorts first
    // takes the folder of the one that was first.
    let build = Build::new("renumbered");
    let (settings, work, fixtures) = (build.settings(), &build.work, &build.fixtures);
    let out = work.join("0");
    nvcc::compile(&settings, &fixtures.join("tiled.cu"), &out).unwrap();
    let second = nvcc::compile(&settings, &fixtures.join("defaults.cu"), &out).unwrap();
    let _ = std::fs::remove_dir_all(work);
    assert_eq!(crate::compiled_for(&second, &build.architectures), Ok(()));
    assert!(second.host_preprocessed.contains("shifted"));
}
