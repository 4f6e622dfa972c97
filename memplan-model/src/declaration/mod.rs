//! A plan's `kernel` declarations checked against the C++, while the
//! program compiles: the code `memplan!` generates evaluates [`check`]
//! in a constant, so a mismatch is a compile error at the declaration,
//! with the C++ and a declaration that matches it. The macro runs the same
//! check where it can read the signatures itself, to word that error as
//! an ordinary one (the runtime's `declaration.rs` says how).
//!
//! What is checked is what the C++ states: the parameters' types (classes
//! by their measured layout), and each pointer parameter's contract, which
//! the source writes next to the parameter (`MEMPLAN_WRITES(n) float *c`)
//! and the declaration must restate (`c: &out [f32; n]`). A pointer
//! parameter without a contract can only be declared `unsafe kernel`.

mod extent;
mod message;

pub use message::{Message, str_eq};

use crate::param::ParamLayout;
use crate::rust_scalar::RustScalar;
use crate::signature::{CParam, CScalar, Contract, ContractAccess, ExtentTerm, KernelSignature};

/// A declared type: which primitive it is or which class it names, and
/// its layout as Rust lays it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RustType {
    /// Which primitive the type is, or the C++ class it names.
    pub scalar: RustScalar,
    /// Its size and alignment.
    pub layout: ParamLayout,
}

impl RustType {
    /// A primitive type as Rust lays it out; `None` for
    /// [`RustScalar::Named`], whose layout is its type's.
    pub const fn primitive(scalar: RustScalar) -> Option<RustType> {
        let layout = match scalar {
            RustScalar::Bool => ParamLayout::of::<bool>(),
            RustScalar::I8 => ParamLayout::of::<i8>(),
            RustScalar::U8 => ParamLayout::of::<u8>(),
            RustScalar::I16 => ParamLayout::of::<i16>(),
            RustScalar::U16 => ParamLayout::of::<u16>(),
            RustScalar::I32 => ParamLayout::of::<i32>(),
            RustScalar::U32 => ParamLayout::of::<u32>(),
            RustScalar::I64 => ParamLayout::of::<i64>(),
            RustScalar::U64 => ParamLayout::of::<u64>(),
            RustScalar::Isize => ParamLayout::of::<isize>(),
            RustScalar::Usize => ParamLayout::of::<usize>(),
            RustScalar::F32 => ParamLayout::of::<f32>(),
            RustScalar::F64 => ParamLayout::of::<f64>(),
            RustScalar::Named { .. } => return None,
        };
        Some(RustType { scalar, layout })
    }
}

/// How a declaration lets the kernel use a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// `&[T]`.
    Read,
    /// `&mut [T]`.
    ReadWrite,
    /// `&out [T]`.
    Write,
    /// `&atomic [T]`: updated with atomic operations only, which its
    /// source states (`MEMPLAN_ATOMIC`), or an `unsafe kernel` promises.
    Atomic,
}

/// A declared parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclaredParam<'a> {
    /// `name: &[T; extent]`, `&mut [T]` or `&out [T]`, spelled `ty`.
    Buffer {
        /// The parameter's name.
        name: &'a str,
        /// The element type.
        elem: RustType,
        /// What the declaration lets the kernel do with the buffer.
        access: Access,
        /// The extent as a program over the declaration's parameters.
        extent: Option<&'a [ExtentTerm]>,
        /// `T` as written.
        elem_spelled: &'a str,
        /// The whole type as written (`&out [f32; n]`), for messages.
        ty: &'a str,
    },
    /// `name: T`, spelled `ty`.
    Value {
        /// The parameter's name.
        name: &'a str,
        /// The type.
        value: RustType,
        /// The type as written, for messages.
        ty: &'a str,
    },
}

impl<'a> DeclaredParam<'a> {
    const fn name(&self) -> &'a str {
        match *self {
            DeclaredParam::Buffer { name, .. } | DeclaredParam::Value { name, .. } => name,
        }
    }

    const fn spelled(&self) -> &'a str {
        match *self {
            DeclaredParam::Buffer { ty, .. } | DeclaredParam::Value { ty, .. } => ty,
        }
    }
}

/// `kernel name(params) from MODULE;` as written.
#[derive(Clone, Copy, Debug)]
pub struct Declared<'a> {
    /// The C++ name looked up: the declared name, or the one after `as`.
    pub name: &'a str,
    /// The declared name, for the suggested declaration.
    pub rust_name: &'a str,
    /// `MODULE` as written, for messages.
    pub module: &'a str,
    /// The parameters, in order.
    pub params: &'a [DeclaredParam<'a>],
    /// Every parameter's name, in order, for extents in messages.
    pub names: &'a [&'a str],
}

/// `Ok` with the kernel's symbol if the declaration matches the kernel
/// of that name among `kernels`, the signatures of the module it names
/// (`None` for a module that does not list them), else the message of
/// the compile error.
// The message is built in constant evaluation, where nothing can be boxed;
// it is never moved around at run time.
#[allow(clippy::result_large_err)]
pub const fn check(
    kernels: Option<&'static [KernelSignature]>,
    declared: &Declared,
) -> Result<&'static str, Message> {
    let Some(kernels) = kernels else {
        return Err(Message::new()
            .push("`")
            .push(declared.module)
            .push("` does not list its kernels' parameters (it was not built by memplan-build), so `")
            .push(declared.rust_name)
            .push("` cannot be checked: declare it `unsafe kernel`, your promise that the declaration matches the C++"));
    };
    let kernel = match find(kernels, declared) {
        Ok(kernel) => kernel,
        Err(message) => return Err(message),
    };
    let Some(params) = kernel.params else {
        return Err(Message::new()
            .push("memplan-build could not read the parameters of `")
            .push(kernel.name)
            .push("` (")
            .push(kernel.cpp)
            .push(
                "): declare it `unsafe kernel`, your promise that the declaration matches the C++",
            ));
    };
    if params.len() != declared.params.len() {
        return Err(mismatch(
            Message::new()
                .push("the declaration has ")
                .push_count(declared.params.len())
                .push(" and the C++ ")
                .push_number(params.len() as u64),
            kernel,
            params,
            declared,
        ));
    }
    if let Some(order) = reordered(kernel, params, declared) {
        return Err(reorder(kernel, &order, declared));
    }
    let mut index = 0;
    while index < params.len() {
        if let Some(problem) = compare_types(&params[index], &declared.params[index]) {
            return Err(mismatch(
                problem.push(
                    Message::new()
                        .push("parameter `")
                        .push(declared.params[index].name())
                        .push("` "),
                ),
                kernel,
                params,
                declared,
            ));
        }
        index += 1;
    }
    let mut index = 0;
    while index < params.len() {
        if let CParam::Pointer { .. } = params[index]
            && contract(kernel, index).is_none()
        {
            return Err(Message::new()
                .push("parameter `")
                .push(declared.params[index].name())
                .push("` of `")
                .push(declared.rust_name)
                .push("` has no contract in its source, so nothing states which elements the kernel touches through it: the C++ is `")
                .push(kernel.cpp)
                .push("`; write `MEMPLAN_READS(n)`, `MEMPLAN_WRITES(n)`, `MEMPLAN_UPDATES(n)` or `MEMPLAN_ATOMIC(n)` before it (`#include <memplan.cuh>`), with the elements it touches in terms of the kernel's integer parameters, or declare the kernel `unsafe kernel`, your promise"));
        }
        index += 1;
    }
    let mut index = 0;
    while index < params.len() {
        if let Some(problem) = compare_contract(contract(kernel, index), &declared.params[index]) {
            return Err(mismatch(
                Message::new()
                    .push("parameter `")
                    .push(declared.params[index].name())
                    .push("` ")
                    .push(problem),
                kernel,
                params,
                declared,
            ));
        }
        index += 1;
    }
    Ok(kernel.symbol)
}

/// The most parameters [`reordered`] looks at (memplan passes 12).
const MOST_REORDERED: usize = 16;

/// Where the declared parameters are the C++ ones in another order, each
/// of the right type (and access, where the source states one) but not
/// every one in its place: for each C++ parameter, the declared one that
/// goes there (the first that fits and is not taken, so that parameters
/// alike keep their declared order).
///
/// Only where a buffer stands in the place of a value, or a value in a
/// buffer's: two values or two buffers of other types in each other's
/// places may as well be two types mistaken, and the help would guess.
const fn reordered(
    kernel: &KernelSignature,
    params: &[CParam],
    declared: &Declared,
) -> Option<[usize; MOST_REORDERED]> {
    let count = params.len();
    if count != declared.params.len() || count > MOST_REORDERED {
        return None;
    }
    let mut kind_differs = false;
    let mut index = 0;
    while index < count {
        kind_differs |= matches!(
            (params[index], declared.params[index]),
            (CParam::Pointer { .. }, DeclaredParam::Value { .. })
                | (CParam::Value(_), DeclaredParam::Buffer { .. })
        );
        index += 1;
    }
    if !kind_differs {
        return None;
    }
    let (mut order, mut taken) = ([0; MOST_REORDERED], [false; MOST_REORDERED]);
    let mut moved = false;
    let mut index = 0;
    while index < count {
        let mut candidate = 0;
        while candidate < count
            && (taken[candidate]
                || compare_types(&params[index], &declared.params[candidate]).is_some()
                || !access_fits(contract(kernel, index), &declared.params[candidate]))
        {
            candidate += 1;
        }
        if candidate == count {
            return None;
        }
        (order[index], taken[candidate]) = (candidate, true);
        moved |= candidate != index;
        index += 1;
    }
    if moved { Some(order) } else { None }
}

/// The message for a declaration whose parameters are in another order
/// than the C++ kernel's: the declaration with the user's own parameters,
/// names and types as written, in the C++ order.
const fn reorder(kernel: &KernelSignature, order: &[usize], declared: &Declared) -> Message {
    let mut message = Message::new()
        .push("the declaration has the parameters of `")
        .push(kernel.name)
        .push("` in another order than its C++: the C++ is `")
        .push(kernel.cpp)
        .push("`; reorder them, `kernel ")
        .push(declared.rust_name)
        .push("(");
    let mut index = 0;
    while index < declared.params.len() {
        let param = &declared.params[order[index]];
        if index > 0 {
            message = message.push(", ");
        }
        message = message.push(param.name()).push(": ").push(param.spelled());
        index += 1;
    }
    message = message.push(") from ").push(declared.module);
    if !str_eq(declared.name, declared.rust_name) {
        message = message.push(" as \"").push(declared.name).push("\"");
    }
    message.push(";`")
}

/// The kernel the declaration names.
// As for `check`.
#[allow(clippy::result_large_err)]
const fn find(
    kernels: &'static [KernelSignature],
    declared: &Declared,
) -> Result<&'static KernelSignature, Message> {
    let mut found: Option<&KernelSignature> = None;
    let mut index = 0;
    while index < kernels.len() {
        if str_eq(kernels[index].name, declared.name) {
            if found.is_some() {
                return Err(Message::new()
                    .push("`")
                    .push(declared.module)
                    .push("` has several kernels named `")
                    .push(declared.name)
                    .push(
                        "` (overloads), which a name cannot tell apart: give each its own name",
                    ));
            }
            found = Some(&kernels[index]);
        }
        index += 1;
    }
    if let Some(kernel) = found {
        return Ok(kernel);
    }
    let mut message = Message::new()
        .push("`")
        .push(declared.module)
        .push("` has no kernel `")
        .push(declared.name)
        .push("`; its kernels are");
    let mut index = 0;
    while index < kernels.len() {
        message = message
            .push(if index == 0 { " `" } else { ", `" })
            .push(kernels[index].name)
            .push("`");
        index += 1;
    }
    if kernels.is_empty() {
        message = message.push(" none");
    }
    Err(message.push(
        " (a C++ kernel is declared by its C++ name, a template's instance with `as \"name<T>\"`)",
    ))
}

/// The contract of parameter `index`, if the source states one.
const fn contract(kernel: &KernelSignature, index: usize) -> Option<&'static Contract> {
    if index < kernel.contracts.len() {
        match &kernel.contracts[index] {
            Some(contract) => Some(contract),
            None => None,
        }
    } else {
        None
    }
}

/// Why a declared type is not the C++ one.
#[derive(Clone, Copy)]
enum TypeProblem {
    Said(&'static str),
    /// The Rust type's layout, and the C++ type's size and alignment.
    Layout(ParamLayout, usize, usize),
}

impl TypeProblem {
    const fn push(self, message: Message) -> Message {
        match self {
            TypeProblem::Said(text) => message.push(text),
            TypeProblem::Layout(rust, size, align) => message
                .push("has a Rust type of ")
                .push_number(rust.size as u64)
                .push(" bytes aligned to ")
                .push_number(rust.align as u64)
                .push(", and the C++ type has ")
                .push_number(size as u64)
                .push(" aligned to ")
                .push_number(align as u64)
                .push(" as nvcc lays it out"),
        }
    }
}

/// What is wrong with one parameter's type, if anything.
const fn compare_types(cpp: &CParam, declared: &DeclaredParam) -> Option<TypeProblem> {
    let said = match (*cpp, *declared) {
        (CParam::Pointer { pointee, .. }, DeclaredParam::Buffer { elem, .. }) => {
            return type_problem(pointee, elem);
        }
        (CParam::Value(cpp), DeclaredParam::Value { value, .. }) => {
            return type_problem(cpp, value);
        }
        (CParam::Pointer { .. }, DeclaredParam::Value { .. }) => {
            "is a value in the declaration and a pointer in the C++"
        }
        (CParam::Value(_), DeclaredParam::Buffer { .. }) => {
            "is a buffer in the declaration and a value in the C++"
        }
        (CParam::Other(_), _) => "has a C++ type no declaration can express",
    };
    Some(TypeProblem::Said(said))
}

/// Why `rust` is not `cpp`, if it is not.
const fn type_problem(cpp: CScalar, rust: RustType) -> Option<TypeProblem> {
    match said_type_problem(cpp, rust) {
        Some(said) => Some(TypeProblem::Said(said)),
        None => {
            let (size, align) = scalar_layout(cpp);
            if rust.layout.size != size || rust.layout.align != align {
                Some(TypeProblem::Layout(rust.layout, size, align))
            } else {
                None
            }
        }
    }
}

/// Why `rust` is not `cpp` in kind or name, if it is not; the layouts are
/// compared after.
const fn said_type_problem(cpp: CScalar, rust: RustType) -> Option<&'static str> {
    if let (CScalar::Named { name, .. }, RustScalar::Named { cpp: named }) = (cpp, rust.scalar) {
        let Some(named) = named else {
            return Some(
                "has a Rust type that names no C++ type (its `KernelValue` impl has no `CPP_NAME`; a type alias is the type it aliases), and the C++ takes a class: implement `KernelValue` with `CPP_NAME` for a `#[repr(C)]` type laid out as the C++ one",
            );
        };
        if !str_eq(name, named) {
            return Some("has a Rust type whose `CPP_NAME` names another C++ class than the C++'s");
        }
        return None;
    }
    if let CScalar::Other(_) = cpp {
        return Some("has a C++ type no declaration can express");
    }
    if !scalar_matches(cpp, rust.scalar) {
        return match (cpp_integer(cpp), rust_integer(rust.scalar)) {
            (Some((cpp_bits, _)), Some((rust_bits, _))) if cpp_bits != rust_bits => {
                Some("has another width than in the C++")
            }
            (Some((_, false)), Some((_, true))) => {
                Some("is signed in the declaration and unsigned in the C++")
            }
            (Some((_, true)), Some((_, false))) => {
                Some("is unsigned in the declaration and signed in the C++")
            }
            _ => Some("has another type than in the C++"),
        };
    }
    None
}

/// What is wrong with a declared buffer's access or extent, given the
/// parameter's contract.
const fn compare_contract(
    contract: Option<&'static Contract>,
    declared: &DeclaredParam,
) -> Option<&'static str> {
    let (Some(contract), DeclaredParam::Buffer { access, extent, .. }) = (contract, *declared)
    else {
        return None;
    };
    if !access_agrees(contract.access, access) {
        if matches!(access, Access::Atomic) {
            return Some(
                "is `&atomic` in the declaration, and its source does not say the kernel updates it with atomic operations only (`MEMPLAN_ATOMIC`)",
            );
        }
        return Some(match contract.access {
            ContractAccess::Reads => {
                "is written (`&mut`/`&out`) in the declaration, and its source says the kernel only reads it"
            }
            ContractAccess::Writes => {
                "is not `&out` in the declaration, and its source says the kernel writes every element of its extent and reads none"
            }
            ContractAccess::Updates => {
                "is not `&mut` in the declaration, and its source says the kernel reads and writes it"
            }
            ContractAccess::Atomic => {
                "is not `&atomic` (or `&mut`) in the declaration, and its source says the kernel updates it atomically"
            }
        });
    }
    match extent {
        None => Some(
            "has no extent in the declaration; its source states the elements the kernel touches, which the declaration restates",
        ),
        Some(extent) if !extent::same(extent, contract.program) => {
            Some("has another extent in the declaration than in its source")
        }
        Some(_) => None,
    }
}

/// Whether a buffer declared with `access` is what its source states.
const fn access_agrees(stated: ContractAccess, access: Access) -> bool {
    matches!(
        (stated, access),
        (ContractAccess::Reads, Access::Read)
            | (ContractAccess::Writes, Access::Write)
            | (ContractAccess::Atomic, Access::Atomic)
            // `&mut` of atomic updates says less than the source: safe.
            | (
                ContractAccess::Updates | ContractAccess::Atomic,
                Access::ReadWrite
            )
    )
}

/// Whether `declared` may stand where the source states `contract`: a
/// buffer of the access stated, or anything where nothing is stated.
const fn access_fits(contract: Option<&'static Contract>, declared: &DeclaredParam) -> bool {
    match (contract, *declared) {
        (Some(contract), DeclaredParam::Buffer { access, .. }) => {
            access_agrees(contract.access, access)
        }
        _ => true,
    }
}

/// An integer type's width in bits and whether it is signed.
const fn cpp_integer(scalar: CScalar) -> Option<(u32, bool)> {
    Some(match scalar {
        CScalar::I8 => (8, true),
        CScalar::U8 => (8, false),
        CScalar::I16 => (16, true),
        CScalar::U16 => (16, false),
        CScalar::I32 => (32, true),
        CScalar::U32 => (32, false),
        CScalar::I64 => (64, true),
        CScalar::U64 => (64, false),
        _ => return None,
    })
}

const fn rust_integer(scalar: RustScalar) -> Option<(u32, bool)> {
    Some(match scalar {
        RustScalar::I8 => (8, true),
        RustScalar::U8 => (8, false),
        RustScalar::I16 => (16, true),
        RustScalar::U16 => (16, false),
        RustScalar::I32 => (32, true),
        RustScalar::U32 => (32, false),
        RustScalar::I64 | RustScalar::Isize => (64, true),
        RustScalar::U64 | RustScalar::Usize => (64, false),
        _ => return None,
    })
}

/// The size and alignment of a C++ scalar on the 64-bit targets CUDA
/// has (classes carry their own).
const fn scalar_layout(scalar: CScalar) -> (usize, usize) {
    match scalar {
        CScalar::Bool | CScalar::I8 | CScalar::U8 => (1, 1),
        CScalar::I16 | CScalar::U16 => (2, 2),
        CScalar::I32 | CScalar::U32 | CScalar::F32 => (4, 4),
        CScalar::I64 | CScalar::U64 | CScalar::F64 => (8, 8),
        CScalar::Named { size, align, .. } => (size, align),
        CScalar::Other(_) => (0, 0),
    }
}

const fn scalar_matches(cpp: CScalar, rust: RustScalar) -> bool {
    matches!(
        (cpp, rust),
        (CScalar::Bool, RustScalar::Bool)
            | (CScalar::I8, RustScalar::I8)
            | (CScalar::U8, RustScalar::U8)
            | (CScalar::I16, RustScalar::I16)
            | (CScalar::U16, RustScalar::U16)
            | (CScalar::I32, RustScalar::I32)
            | (CScalar::U32, RustScalar::U32)
            | (CScalar::I64, RustScalar::I64 | RustScalar::Isize)
            | (CScalar::U64, RustScalar::U64 | RustScalar::Usize)
            | (CScalar::F32, RustScalar::F32)
            | (CScalar::F64, RustScalar::F64)
    )
}

/// The message of a mismatch: what differs, the C++, and a declaration
/// that matches it (with the declared names where there are as many).
const fn mismatch(
    what: Message,
    kernel: &KernelSignature,
    params: &'static [CParam],
    declared: &Declared,
) -> Message {
    let mut message = what.push(": the C++ is `").push(kernel.cpp).push("`; ");
    let mut index = 0;
    while index < params.len() {
        if let CParam::Other(_) = params[index] {
            return message.push("no declaration can pass it every parameter");
        }
        index += 1;
    }
    message = message
        .push("declare it `kernel ")
        .push(declared.rust_name)
        .push("(");
    let same_count = params.len() == declared.params.len();
    let mut index = 0;
    while index < params.len() {
        if index > 0 {
            message = message.push(", ");
        }
        let mine = if same_count {
            Some(&declared.params[index])
        } else {
            None
        };
        message = match mine {
            Some(param) => message.push(param.name()).push(": "),
            None => message.push("p").push_number(index as u64).push(": "),
        };
        let contract = contract(kernel, index);
        let matches = match mine {
            Some(param) => {
                compare_types(&params[index], param).is_none()
                    && compare_contract(contract, param).is_none()
            }
            None => false,
        };
        message = match (mine, params[index]) {
            // What already matches stays as written.
            (Some(param), _) if matches => message.push(param.spelled()),
            (_, CParam::Pointer { pointee, konst }) => {
                let access = match contract {
                    Some(contract) => contract.access,
                    None if konst => ContractAccess::Reads,
                    None => ContractAccess::Updates,
                };
                message = message.push(match access {
                    ContractAccess::Reads => "&[",
                    ContractAccess::Writes => "&out [",
                    ContractAccess::Updates => "&mut [",
                    ContractAccess::Atomic => "&atomic [",
                });
                // The element as declared where its type is right.
                message = match mine {
                    Some(DeclaredParam::Buffer {
                        elem, elem_spelled, ..
                    }) if type_problem(pointee, *elem).is_none() => message.push(elem_spelled),
                    _ => message.push(scalar_spelling(pointee)),
                };
                if let Some(contract) = contract {
                    let names: &[&str] = if same_count { declared.names } else { &[] };
                    message = extent::push(message.push("; "), contract.program, names);
                }
                message.push("]")
            }
            (_, CParam::Value(scalar)) => message.push(scalar_spelling(scalar)),
            (_, CParam::Other(spelling)) => message.push(spelling),
        };
        index += 1;
    }
    message = message.push(") from ").push(declared.module);
    if !str_eq(declared.name, declared.rust_name) {
        message = message.push(" as \"").push(declared.name).push("\"");
    }
    message.push(";`")
}

/// A Rust type for `scalar`, for suggestions: memplan's own for CUDA's
/// vector types, the C++ name (which a type of the user's mirrors) for
/// other classes.
const fn scalar_spelling(scalar: CScalar) -> &'static str {
    if let CScalar::Named { name, .. } = scalar {
        let mut index = 0;
        while index < VECTORS.len() {
            if str_eq(VECTORS[index].0, name) {
                return VECTORS[index].1;
            }
            index += 1;
        }
    }
    match scalar {
        CScalar::Bool => "bool",
        CScalar::I8 => "i8",
        CScalar::U8 => "u8",
        CScalar::I16 => "i16",
        CScalar::U16 => "u16",
        CScalar::I32 => "i32",
        CScalar::U32 => "u32",
        CScalar::I64 => "i64",
        CScalar::U64 => "u64",
        CScalar::F32 => "f32",
        CScalar::F64 => "f64",
        CScalar::Named { name, .. } | CScalar::Other(name) => name,
    }
}

/// CUDA's vector types that memplan mirrors (the runtime's `vector.rs`).
const VECTORS: &[(&str, &str)] = &[
    ("float2", "memplan::Float2"),
    ("float4", "memplan::Float4"),
    ("double2", "memplan::Double2"),
    ("int2", "memplan::Int2"),
    ("int4", "memplan::Int4"),
    ("uint2", "memplan::UInt2"),
    ("uint4", "memplan::UInt4"),
];

#[cfg(test)]
mod tests;
