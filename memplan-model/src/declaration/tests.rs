use super::*;
use crate::signature::WaitsFirst;

const F32: RustType = RustType::primitive(RustScalar::F32).unwrap();
const I32: RustType = RustType::primitive(RustScalar::I32).unwrap();
const N_EXTENT: &[ExtentTerm] = &[ExtentTerm::Param(2)];
const READS_N: Contract = Contract {
    access: ContractAccess::Reads,
    extent: "n",
    program: N_EXTENT,
};
const WRITES_N: Contract = Contract {
    access: ContractAccess::Writes,
    extent: "n",
    program: N_EXTENT,
};

const SIGNATURES: &[KernelSignature] = &[
    KernelSignature {
        symbol: "vadd",
        name: "vadd",
        params: Some(&[
            CParam::Pointer {
                pointee: CScalar::F32,
                konst: true,
            },
            CParam::Pointer {
                pointee: CScalar::F32,
                konst: false,
            },
            CParam::Value(CScalar::I32),
        ]),
        contracts: &[Some(READS_N), Some(WRITES_N), None],
        cpp: "extern \"C\" __global__ void vadd(MEMPLAN_READS(n) const float *a, MEMPLAN_WRITES(n) float *c, int n)",
        waits_first: WaitsFirst::UNKNOWN,
    },
    KernelSignature {
        symbol: "bare",
        name: "bare",
        params: Some(&[
            CParam::Pointer {
                pointee: CScalar::F32,
                konst: false,
            },
            CParam::Value(CScalar::I32),
        ]),
        contracts: &[],
        cpp: "extern \"C\" __global__ void bare(float *, int)",
        waits_first: WaitsFirst::UNKNOWN,
    },
    KernelSignature {
        symbol: "window",
        name: "window",
        params: Some(&[
            CParam::Pointer {
                pointee: CScalar::Named {
                    name: "float4",
                    size: 16,
                    align: 16,
                },
                konst: false,
            },
            CParam::Value(CScalar::Named {
                name: "Window",
                size: 12,
                align: 4,
            }),
            CParam::Value(CScalar::I32),
        ]),
        contracts: &[
            Some(Contract {
                access: ContractAccess::Updates,
                extent: "n",
                program: N_EXTENT,
            }),
            None,
            None,
        ],
        cpp: "extern \"C\" __global__ void window(MEMPLAN_UPDATES(n) float4 *v, Window w, int n)",
        waits_first: WaitsFirst::UNKNOWN,
    },
];
/// The module's signatures, as an image built by memplan-build lists them.
const IMAGE: Option<&[KernelSignature]> = Some(SIGNATURES);

fn declared(name: &'static str, params: &'static [DeclaredParam<'static>]) -> Declared<'static> {
    Declared {
        name,
        rust_name: name,
        module: "KERNELS",
        params,
        names: &["a", "c", "n"],
    }
}

const fn buffer(
    name: &'static str,
    access: Access,
    extent: Option<&'static [ExtentTerm]>,
    ty: &'static str,
) -> DeclaredParam<'static> {
    DeclaredParam::Buffer {
        name,
        elem: F32,
        access,
        extent,
        elem_spelled: "f32",
        ty,
    }
}

const A: DeclaredParam = buffer("a", Access::Read, Some(N_EXTENT), "&[f32; n]");
const C: DeclaredParam = buffer("c", Access::Write, Some(N_EXTENT), "&out [f32; n]");
const N: DeclaredParam = DeclaredParam::Value {
    name: "n",
    value: I32,
    ty: "i32",
};

fn error(params: &'static [DeclaredParam]) -> String {
    check(IMAGE, &declared("vadd", params))
        .unwrap_err()
        .as_str()
        .to_owned()
}

#[test]
fn a_matching_declaration_gives_the_symbol() {
    assert_eq!(check(IMAGE, &declared("vadd", &[A, C, N])).unwrap(), "vadd");
}

#[test]
fn each_type_mismatch_names_the_parameter_and_the_fix() {
    let fix = "declare it `kernel vadd(a: &[f32; n], c: &out [f32; n], n: i32) from KERNELS;`";
    const WIDE: DeclaredParam = DeclaredParam::Value {
        name: "n",
        value: RustType::primitive(RustScalar::U64).unwrap(),
        ty: "u64",
    };
    let message = error(&[A, C, WIDE]);
    assert!(
        message.starts_with("parameter `n` has another width"),
        "{message}"
    );
    assert!(message.contains("MEMPLAN_WRITES(n) float *c"), "{message}");
    assert!(message.ends_with(fix), "{message}");
    const DOUBLES: DeclaredParam = DeclaredParam::Buffer {
        name: "a",
        elem: RustType::primitive(RustScalar::F64).unwrap(),
        access: Access::Read,
        extent: Some(N_EXTENT),
        elem_spelled: "f64",
        ty: "&[f64; n]",
    };
    assert!(error(&[DOUBLES, C, N]).contains("another type than in the C++"));
    assert!(error(&[A, C, A]).contains("is a buffer in the declaration and a value"));
    const UNSIGNED: DeclaredParam = DeclaredParam::Value {
        name: "n",
        value: RustType::primitive(RustScalar::U32).unwrap(),
        ty: "u32",
    };
    assert!(error(&[A, C, UNSIGNED]).contains("is unsigned in the declaration and signed"));
    let message = error(&[A, C]);
    assert!(
        message.starts_with("the declaration has 2 parameters and the C++ 3:"),
        "{message}"
    );
    assert!(
        message.contains("vadd(p0: &[f32; p2], p1: &out [f32; p2], p2: i32)"),
        "{message}"
    );
}

#[test]
fn the_declaration_restates_each_contract() {
    let fix = "declare it `kernel vadd(a: &[f32; n], c: &out [f32; n], n: i32) from KERNELS;`";
    const WRITABLE: DeclaredParam = buffer("a", Access::ReadWrite, Some(N_EXTENT), "&mut [f32; n]");
    let message = error(&[WRITABLE, C, N]);
    assert!(message.contains("the kernel only reads it"), "{message}");
    assert!(message.ends_with(fix), "{message}");
    const READ_ONLY: DeclaredParam = buffer("c", Access::Read, Some(N_EXTENT), "&[f32; n]");
    assert!(error(&[A, READ_ONLY, N]).contains("writes every element of its extent"));
    const NO_EXTENT: DeclaredParam = buffer("c", Access::Write, None, "&out [f32]");
    let message = error(&[A, NO_EXTENT, N]);
    assert!(
        message.contains("has no extent in the declaration"),
        "{message}"
    );
    assert!(message.ends_with(fix), "{message}");
    const ONE: DeclaredParam = buffer(
        "c",
        Access::Write,
        Some(&[ExtentTerm::Literal(1)]),
        "&out [f32; 1]",
    );
    let message = error(&[A, ONE, N]);
    assert!(message.contains("has another extent"), "{message}");
    assert!(message.ends_with(fix), "{message}");
}

#[test]
fn atomic_is_declared_only_of_what_its_source_updates_atomically() {
    const ATOMIC: DeclaredParam = buffer("c", Access::Atomic, Some(N_EXTENT), "&atomic [f32; n]");
    let message = error(&[A, ATOMIC, N]);
    assert!(
        message.contains("is `&atomic` in the declaration, and its source does not say"),
        "{message}"
    );
    assert!(message.contains("c: &out [f32; n]"), "{message}");
}

#[test]
fn a_pointer_without_a_contract_needs_unsafe() {
    const DATA: DeclaredParam = buffer(
        "data",
        Access::ReadWrite,
        Some(&[ExtentTerm::Param(1)]),
        "&mut [f32; n]",
    );
    const COUNT: DeclaredParam = DeclaredParam::Value {
        name: "n",
        value: I32,
        ty: "i32",
    };
    let message = check(IMAGE, &declared("bare", &[DATA, COUNT])).unwrap_err();
    let message = message.as_str();
    assert!(
        message.starts_with("parameter `data` of `bare` has no contract in its source"),
        "{message}"
    );
    assert!(
        message.contains("declare the kernel `unsafe kernel`"),
        "{message}"
    );
}

#[test]
fn classes_match_by_the_name_their_impl_gives_and_by_layout() {
    #[repr(C, align(16))]
    struct Float4([f32; 4]);
    #[repr(C)]
    struct Window(u32, u32, f32);
    const fn class(cpp: Option<&'static str>, layout: ParamLayout) -> RustType {
        RustType {
            scalar: RustScalar::Named { cpp },
            layout,
        }
    }
    const fn params(v: RustType, w: RustType) -> [DeclaredParam<'static>; 3] {
        [
            DeclaredParam::Buffer {
                name: "v",
                elem: v,
                access: Access::ReadWrite,
                extent: Some(N_EXTENT),
                elem_spelled: "Float4",
                ty: "&mut [Float4; n]",
            },
            DeclaredParam::Value {
                name: "w",
                value: w,
                ty: "Window",
            },
            N,
        ]
    }
    const FLOAT4: RustType = class(Some("float4"), ParamLayout::of::<Float4>());
    const WINDOW: RustType = class(Some("Window"), ParamLayout::of::<Window>());
    let check = |params: &'static [DeclaredParam]| {
        let declared = Declared {
            name: "window",
            rust_name: "window",
            module: "KERNELS",
            params,
            names: &["v", "w", "n"],
        };
        check(IMAGE, &declared).map_err(|m| m.as_str().to_owned())
    };
    const RIGHT: [DeclaredParam; 3] = params(FLOAT4, WINDOW);
    assert_eq!(check(&RIGHT), Ok("window"));
    // `type Window = [u64; 2];`: its impl names no class.
    const ALIAS: [DeclaredParam; 3] = params(FLOAT4, class(None, ParamLayout::of::<[u64; 2]>()));
    assert!(check(&ALIAS).unwrap_err().contains("names no C++ type"));
    // Named `float4` but four bytes.
    const SMALL: [DeclaredParam; 3] =
        params(class(Some("float4"), ParamLayout::of::<f32>()), WINDOW);
    assert!(
        check(&SMALL)
            .unwrap_err()
            .contains("a Rust type of 4 bytes aligned to 4, and the C++ type has 16 aligned to 16")
    );
    const OTHER: [DeclaredParam; 3] =
        params(FLOAT4, class(Some("Frame"), ParamLayout::of::<Window>()));
    assert!(
        check(&OTHER)
            .unwrap_err()
            .contains("names another C++ class")
    );
    // A class where the C++ has a scalar.
    const CLASS_FOR_INT: [DeclaredParam; 3] = [A, C, params(FLOAT4, WINDOW)[1]];
    assert!(error(&CLASS_FOR_INT).contains("another type than in the C++"));
}

#[test]
fn unknown_names_list_the_module() {
    let message = check(IMAGE, &declared("vsub", &[A, C, N])).unwrap_err();
    assert!(
        message.as_str().starts_with(
            "`KERNELS` has no kernel `vsub`; its kernels are `vadd`, `bare`, `window`"
        ),
        "{message:?}"
    );
}

#[test]
fn modules_that_list_no_signatures_need_unsafe() {
    let message = check(None, &declared("vadd", &[A, C, N])).unwrap_err();
    assert!(message.as_str().contains("declare it `unsafe kernel`"));
}

/// The check runs in constant evaluation, which is where plans use it.
const _: () = match check(
    IMAGE,
    &Declared {
        name: "vadd",
        rust_name: "vadd",
        module: "KERNELS",
        params: &[A, C, N],
        names: &["a", "c", "n"],
    },
) {
    Ok(_) => (),
    Err(message) => panic!("{}", message.as_str()),
};

#[test]
fn parameters_in_another_order_are_reordered_as_written() {
    let message = error(&[N, A, C]);
    assert!(
        message.starts_with(
            "the declaration has the parameters of `vadd` in another order than its C++"
        ),
        "{message}"
    );
    // The user's names and types, as written, in the C++ order.
    assert!(
        message.ends_with(
            "reorder them, `kernel vadd(a: &[f32; n], c: &out [f32; n], n: i32) from KERNELS;`"
        ),
        "{message}"
    );
    // Buffers alike go where their access does: `c`, written, to the
    // source's written parameter, though declared first.
    let message = error(&[N, C, A]);
    assert!(
        message.ends_with(
            "reorder them, `kernel vadd(a: &[f32; n], c: &out [f32; n], n: i32) from KERNELS;`"
        ),
        "{message}"
    );
    // Two buffers in each other's places, no value moved, may be two
    // mistaken accesses: no reordering is guessed, the parameter is named.
    let message = error(&[C, A, N]);
    assert!(message.starts_with("parameter `c` "), "{message}");
    // Not a permutation: a parameter of no C++ type.
    const WIDE: DeclaredParam = DeclaredParam::Value {
        name: "n",
        value: RustType::primitive(RustScalar::U64).unwrap(),
        ty: "u64",
    };
    assert!(error(&[WIDE, A, C]).starts_with("parameter `n` is a value"));
}
