//! A plan's `kernel` declarations checked against the C++, while the
//! program compiles: the code `memplan!` generates evaluates
//! [`check_kernel`] in a constant, so a mismatch is a compile error at the
//! declaration, with the C++ signature and a declaration that matches it.

use crate::image::Image;
use crate::signature::{CParam, CScalar, KernelSignature};

/// A Rust type in a kernel declaration, as far as the check knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RustScalar {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Isize,
    Usize,
    F32,
    F64,
    /// Another type, by its last path segment: it matches a C++ class of
    /// that name.
    Named(&'static str),
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
}

/// A declared parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclaredParam {
    /// `name: &[T]`, `&mut [T]` or `&out [T]`, spelled `ty`.
    Buffer {
        name: &'static str,
        elem: RustScalar,
        access: Access,
        ty: &'static str,
    },
    /// `name: T`, spelled `ty`.
    Value {
        name: &'static str,
        scalar: RustScalar,
        ty: &'static str,
    },
}

impl DeclaredParam {
    const fn name(&self) -> &'static str {
        match *self {
            DeclaredParam::Buffer { name, .. } | DeclaredParam::Value { name, .. } => name,
        }
    }

    const fn spelled(&self) -> &'static str {
        match *self {
            DeclaredParam::Buffer { ty, .. } | DeclaredParam::Value { ty, .. } => ty,
        }
    }
}

/// `kernel name(params) from MODULE;` as written.
#[derive(Clone, Copy, Debug)]
pub struct Declared {
    /// The C++ name looked up: the declared name, or the one after `as`.
    pub name: &'static str,
    /// The declared name, for the suggested declaration.
    pub rust_name: &'static str,
    /// `MODULE` as written, for messages.
    pub module: &'static str,
    pub params: &'static [DeclaredParam],
}

/// `Ok` with the kernel's symbol if the declaration matches the kernel
/// of that name in `image`, else the message of the compile error. An
/// image built without nvcc ([`Image::unbuilt`]) accepts every
/// declaration: it cannot be loaded anyway.
// The message is built in constant evaluation, where nothing can be boxed;
// it is never moved around at run time.
#[allow(clippy::result_large_err)]
pub const fn check_kernel(image: &Image, declared: &Declared) -> Result<&'static str, Message> {
    if image.is_unbuilt() {
        return Ok(declared.name);
    }
    let Some(kernels) = image.kernels() else {
        return Err(Message::new()
            .push("`")
            .push(declared.module)
            .push("` does not list its kernels' parameters (it was not built by memplan-build), so `")
            .push(declared.rust_name)
            .push("` cannot be checked: declare it `unsafe kernel`, your promise that the declaration matches the C++"));
    };
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
    let Some(kernel) = found else {
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
        return Err(message.push(
            " (a C++ kernel is declared by its C++ name, a template's instance with `as \"name<T>\"`)",
        ));
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
                .push_count_digits(params.len()),
            kernel,
            params,
            declared,
        ));
    }
    let mut index = 0;
    while index < params.len() {
        if let Some(problem) = compare(&params[index], &declared.params[index]) {
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

/// What an `unsafe kernel` declaration calls, in an `unsafe` block of the
/// user's, so that it is an `unsafe` promise to the compiler too.
///
/// # Safety
/// The declaration matches the kernel's C++ parameters, in number, kind
/// (pointer or value), type and width, and what the kernel reads and
/// writes through each pointer.
pub const unsafe fn promise_kernel_matches() {}

/// The symbol to load for a checked declaration (its own name when the
/// check fails: that is a compile error anyway).
pub const fn kernel_symbol(image: &Image, declared: &Declared) -> &'static str {
    match check_kernel(image, declared) {
        Ok(symbol) => symbol,
        Err(_) => declared.name,
    }
}

/// What is wrong with one parameter, if anything.
const fn compare(cpp: &CParam, declared: &DeclaredParam) -> Option<&'static str> {
    match (*cpp, *declared) {
        (CParam::Pointer { pointee, konst }, DeclaredParam::Buffer { elem, access, .. }) => {
            if !scalar_matches(pointee, elem) {
                Some("points to another element type than the C++ pointer")
            } else if konst && !matches!(access, Access::Read) {
                // Declaring a `const T *` writable is allowed but says
                // nothing true: no.
                Some("is written (`&mut`/`&out`) but the C++ pointer is `const`")
            } else if !konst && matches!(access, Access::Read) {
                Some(
                    "is read-only (`&[T]`) but the C++ pointer is not `const`, so the kernel may write through it",
                )
            } else {
                None
            }
        }
        (CParam::Pointer { .. }, DeclaredParam::Value { .. }) => {
            Some("is a value in the declaration and a pointer in the C++")
        }
        (CParam::Value(_), DeclaredParam::Buffer { .. }) => {
            Some("is a buffer in the declaration and a value in the C++")
        }
        (CParam::Value(cpp), DeclaredParam::Value { scalar, .. }) => {
            if scalar_matches(cpp, scalar) {
                return None;
            }
            match (cpp_integer(cpp), rust_integer(scalar)) {
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
            }
        }
        (CParam::Other(_), _) => Some("has a C++ type no declaration can express"),
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

const fn scalar_matches(cpp: CScalar, rust: RustScalar) -> bool {
    match (cpp, rust) {
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
        | (CScalar::F64, RustScalar::F64) => true,
        (CScalar::Named(cpp), RustScalar::Named(rust)) => str_eq(cpp, rust),
        _ => false,
    }
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
            None => message.push("p").push_count_digits(index).push(": "),
        };
        message = match (mine, params[index]) {
            // What already matches stays as written.
            (Some(param), cpp) if compare(&cpp, param).is_none() => message.push(param.spelled()),
            (_, CParam::Pointer { pointee, konst }) => {
                let writes_only = matches!(
                    mine,
                    Some(DeclaredParam::Buffer {
                        access: Access::Write,
                        ..
                    })
                );
                message
                    .push(if konst {
                        "&["
                    } else if writes_only {
                        "&out ["
                    } else {
                        "&mut ["
                    })
                    .push(scalar_spelling(pointee))
                    .push("]")
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

const fn scalar_spelling(scalar: CScalar) -> &'static str {
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
        CScalar::Named(name) | CScalar::Other(name) => name,
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// A message built in constant evaluation, where `format!` is not
/// available: text appended into a fixed buffer (cut at its end).
#[derive(Clone, Copy)]
pub struct Message {
    bytes: [u8; Message::CAPACITY],
    len: usize,
}

impl Message {
    const CAPACITY: usize = 1024;

    pub const fn new() -> Message {
        Message {
            bytes: [0; Message::CAPACITY],
            len: 0,
        }
    }

    /// `text` appended, as far as it fits; never splits a character.
    pub const fn push(mut self, text: &str) -> Message {
        let text = text.as_bytes();
        let mut index = 0;
        while index < text.len() && self.len < Message::CAPACITY {
            self.bytes[self.len] = text[index];
            self.len += 1;
            index += 1;
        }
        // Cut short: back off a character cut in two.
        if index < text.len() {
            while self.len > 0 && core::str::from_utf8(self.bytes.split_at(self.len).0).is_err() {
                self.len -= 1;
            }
        }
        self
    }

    /// `3 parameters`, `1 parameter`.
    const fn push_count(self, count: usize) -> Message {
        let message = self.push_count_digits(count);
        if count == 1 {
            message.push(" parameter")
        } else {
            message.push(" parameters")
        }
    }

    const fn push_count_digits(mut self, mut value: usize) -> Message {
        let mut digits = [0u8; 20];
        let mut len = 0;
        loop {
            digits[digits.len() - 1 - len] = b'0' + (value % 10) as u8;
            len += 1;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        let mut index = digits.len() - len;
        while index < digits.len() && self.len < Message::CAPACITY {
            self.bytes[self.len] = digits[index];
            self.len += 1;
            index += 1;
        }
        self
    }

    pub const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "",
        }
    }
}

impl Default for Message {
    fn default() -> Self {
        Message::new()
    }
}

impl core::fmt::Debug for Message {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIGNATURES: &[KernelSignature] = &[KernelSignature {
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
        cpp: "extern \"C\" __global__ void vadd(const float *, float *, int)",
    }];
    // SAFETY: never loaded; the bytes are not an image.
    static IMAGE: Image = unsafe { Image::from_build(&[], SIGNATURES) };

    fn declared(params: &'static [DeclaredParam]) -> Declared {
        Declared {
            name: "vadd",
            rust_name: "vadd",
            module: "KERNELS",
            params,
        }
    }

    const A: DeclaredParam = DeclaredParam::Buffer {
        name: "a",
        elem: RustScalar::F32,
        access: Access::Read,
        ty: "&[f32]",
    };
    const C: DeclaredParam = DeclaredParam::Buffer {
        name: "c",
        elem: RustScalar::F32,
        access: Access::Write,
        ty: "&out [f32]",
    };
    const N: DeclaredParam = DeclaredParam::Value {
        name: "n",
        scalar: RustScalar::I32,
        ty: "i32",
    };

    fn error(params: &'static [DeclaredParam]) -> String {
        check_kernel(&IMAGE, &declared(params))
            .unwrap_err()
            .as_str()
            .to_owned()
    }

    #[test]
    fn a_matching_declaration_gives_the_symbol() {
        assert_eq!(check_kernel(&IMAGE, &declared(&[A, C, N])).unwrap(), "vadd");
    }

    #[test]
    fn each_mismatch_names_the_parameter_and_the_fix() {
        let fix = "declare it `kernel vadd(a: &[f32], c: &out [f32], n: i32) from KERNELS;`";
        const WIDE: DeclaredParam = DeclaredParam::Value {
            name: "n",
            scalar: RustScalar::U64,
            ty: "u64",
        };
        let message = error(&[A, C, WIDE]);
        assert!(
            message.starts_with("parameter `n` has another width"),
            "{message}"
        );
        assert!(
            message.contains("void vadd(const float *, float *, int)"),
            "{message}"
        );
        assert!(message.ends_with(fix), "{message}");
        const WRITABLE: DeclaredParam = DeclaredParam::Buffer {
            name: "a",
            elem: RustScalar::F32,
            access: Access::ReadWrite,
            ty: "&mut [f32]",
        };
        assert!(error(&[WRITABLE, C, N]).contains("the C++ pointer is `const`"));
        const READ_ONLY: DeclaredParam = DeclaredParam::Buffer {
            name: "c",
            elem: RustScalar::F32,
            access: Access::Read,
            ty: "&[f32]",
        };
        assert!(error(&[A, READ_ONLY, N]).contains("may write through it"));
        const DOUBLES: DeclaredParam = DeclaredParam::Buffer {
            name: "a",
            elem: RustScalar::F64,
            access: Access::Read,
            ty: "&[f64]",
        };
        assert!(error(&[DOUBLES, C, N]).contains("another element type"));
        assert!(error(&[A, C, A]).contains("is a buffer in the declaration and a value"));
        const UNSIGNED: DeclaredParam = DeclaredParam::Value {
            name: "n",
            scalar: RustScalar::U32,
            ty: "u32",
        };
        assert!(error(&[A, C, UNSIGNED]).contains("is unsigned in the declaration and signed"));
        const FLOAT: DeclaredParam = DeclaredParam::Value {
            name: "n",
            scalar: RustScalar::F32,
            ty: "f32",
        };
        assert!(error(&[A, C, FLOAT]).contains("has another type than in the C++"));
        let message = error(&[A, C]);
        assert!(
            message.starts_with("the declaration has 2 parameters and the C++ 3:"),
            "{message}"
        );
        assert!(
            message.contains("vadd(p0: &[f32], p1: &mut [f32], p2: i32)"),
            "{message}"
        );
    }

    #[test]
    fn unknown_names_list_the_module() {
        let mut missing = declared(&[A, C, N]);
        missing.name = "vsub";
        let message = check_kernel(&IMAGE, &missing).unwrap_err();
        assert!(
            message
                .as_str()
                .starts_with("`KERNELS` has no kernel `vsub`; its kernels are `vadd`")
        );
    }

    #[test]
    fn images_of_unknown_origin_need_unsafe_and_unbuilt_ones_pass() {
        // SAFETY: never loaded.
        let foreign = unsafe { Image::from_static(&[]) };
        let message = check_kernel(&foreign, &declared(&[A, C, N])).unwrap_err();
        assert!(message.as_str().contains("declare it `unsafe kernel`"));
        assert!(check_kernel(&Image::unbuilt(&[]), &declared(&[])).is_ok());
    }

    #[test]
    fn messages_stop_at_their_capacity_on_a_character() {
        let long = "é".repeat(2000);
        let message = Message::new().push(&long);
        assert!(message.as_str().len() <= Message::CAPACITY);
        assert!(message.as_str().chars().all(|c| c == 'é'));
        assert_eq!(Message::new().push_count(1).as_str(), "1 parameter");
        assert_eq!(Message::new().push_count_digits(1024).as_str(), "1024");
    }

    /// The check runs in constant evaluation, which is where plans use it.
    const _: () = match check_kernel(
        &IMAGE,
        &Declared {
            name: "vadd",
            rust_name: "vadd",
            module: "KERNELS",
            params: &[A, C, N],
        },
    ) {
        Ok(_) => (),
        Err(message) => panic!("{}", message.as_str()),
    };
}
