//! The Rust side of a kernel's value parameter: which primitive type it
//! is, or which C++ class it names. A leaf: the kernel values
//! (`kernel.rs`) say theirs, and the declaration check (`declaration/`)
//! compares them with the C++.

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
    /// Any other type: the C++ class its [`KernelValue`](crate::KernelValue)
    /// impl names, if any.
    Named {
        cpp: Option<&'static str>,
    },
}
