//! The Rust side of a kernel's value parameter: which primitive type it
//! is, or which C++ class it names. A leaf: the runtime's kernel values
//! say theirs, and the declaration check (`declaration/`) compares them
//! with the C++.

/// A Rust type in a kernel declaration, as far as the check knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RustScalar {
    /// `bool`.
    Bool,
    /// `i8`.
    I8,
    /// `u8`.
    U8,
    /// `i16`.
    I16,
    /// `u16`.
    U16,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// `isize`.
    Isize,
    /// `usize`.
    Usize,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// Any other type: the C++ class its `KernelValue` impl names, if
    /// any.
    Named {
        /// The C++ class's qualified name (`float4`), or `None` for a type
        /// that names none and so matches no C++ type.
        cpp: Option<&'static str>,
    },
}
