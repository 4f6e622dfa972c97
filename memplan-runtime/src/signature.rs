//! Kernels' C++ signatures, as `memplan-build` read them from nvcc, in a
//! form constant evaluation can compare with a plan's declarations.

/// A scalar type of a kernel parameter, or of what a pointer points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CScalar {
    Bool,
    /// `char`, `signed char`: `i8`.
    I8,
    /// `unsigned char`: `u8`.
    U8,
    /// `short`: `i16`.
    I16,
    /// `unsigned short`: `u16`.
    U16,
    /// `int`: `i32`.
    I32,
    /// `unsigned int`: `u32`.
    U32,
    /// `long`, `long long`: `i64` or `isize` (64-bit Linux).
    I64,
    /// `unsigned long` (`size_t`), `unsigned long long`: `u64` or `usize`.
    U64,
    /// `float`: `f32`.
    F32,
    /// `double`: `f64`.
    F64,
    /// A class, struct or enum, by its unqualified name: a Rust type of the
    /// same name matches it (its layout is the `unsafe` promise of
    /// [`KernelValue`](crate::KernelValue)).
    Named(&'static str),
    /// A type no Rust declaration matches (`__half`, `long double`, ...),
    /// by its C++ spelling.
    Other(&'static str),
}

/// One parameter of a kernel, as the C++ declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CParam {
    /// `T *`, or `const T *` (`konst`).
    Pointer { pointee: CScalar, konst: bool },
    /// A value passed by copy.
    Value(CScalar),
    /// What no declaration can express (a reference, a pointer to a
    /// pointer), by its C++ spelling.
    Other(&'static str),
}

/// A `__global__` function of a module `memplan-build` compiled.
#[derive(Clone, Copy, Debug)]
pub struct KernelSignature {
    /// The symbol the driver knows it by: the name of an `extern "C"`
    /// kernel, the mangled name of a C++ one.
    pub symbol: &'static str,
    /// Its C++ name: `vadd`, `ns::blur`, `scale<float>`.
    pub name: &'static str,
    /// Its parameters; `None` where they could not be read (a type the
    /// reader does not know), so declarations of it need `unsafe kernel`.
    pub params: Option<&'static [CParam]>,
    /// The declaration as C++ would write it, for messages:
    /// `extern "C" __global__ void vadd(const float *, const float *, float *, int)`.
    pub cpp: &'static str,
}
