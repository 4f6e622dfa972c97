//! Kernels' C++ signatures, as `memplan-build` read them from nvcc, in a
//! form constant evaluation can compare with a plan's declarations.

/// A scalar type of a kernel parameter, or of what a pointer points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CScalar {
    /// `bool`: `bool`.
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
    /// A class, struct, union or enum (`float4`, `ns::Window`), by its
    /// qualified name, with the size and alignment nvcc gave it. A Rust
    /// type matches it only if its `KernelValue` impl names it
    /// (`KernelValue::CPP_NAME`, an `unsafe` promise of the same layout) and has the same size and
    /// alignment.
    Named {
        /// The qualified name, `ns::Window`.
        name: &'static str,
        /// Its size in bytes, as nvcc lays it out.
        size: usize,
        /// Its alignment in bytes, as nvcc lays it out.
        align: usize,
    },
    /// A type no Rust declaration matches (`__half`, `long double`, ...),
    /// by its C++ spelling.
    Other(&'static str),
}

/// One parameter of a kernel, as the C++ declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CParam {
    /// `T *`, or `const T *` (`konst`).
    Pointer {
        /// `T`, what the pointer points to.
        pointee: CScalar,
        /// Whether the pointer is to `const T`.
        konst: bool,
    },
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
    /// What the kernel's body does with each parameter, as the source
    /// states it (`MEMPLAN_READS(n) const float *a`): one entry per
    /// parameter, `None` for a parameter without a contract; empty for a
    /// kernel whose source states none.
    pub contracts: &'static [Option<Contract>],
    /// The declaration as C++ would write it, for messages:
    /// `extern "C" __global__ void vadd(const float *, const float *, float *, int)`,
    /// or with the contracts and names where the source states contracts.
    pub cpp: &'static str,
}

/// What a kernel's body does with the elements of a pointer parameter,
/// stated in its source with `memplan.cuh`'s macros, next to the
/// parameter: `MEMPLAN_WRITES(n) float *c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contract {
    /// What the kernel does with the elements.
    pub access: ContractAccess,
    /// The extent as the source writes it: `n`, `rows * cols`.
    pub extent: &'static str,
    /// The extent as a program over the kernel's parameters.
    pub program: &'static [ExtentTerm],
}

/// The kinds of access a contract states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContractAccess {
    /// `MEMPLAN_READS(e)`: reads elements `[0, e)`, writes none.
    Reads,
    /// `MEMPLAN_WRITES(e)`: writes every element of `[0, e)` in any launch
    /// of at least one block, and reads none before writing it.
    Writes,
    /// `MEMPLAN_UPDATES(e)`: reads and writes elements of `[0, e)`.
    Updates,
    /// `MEMPLAN_ATOMIC(e)`: reads and writes elements of `[0, e)` with
    /// atomic operations only.
    Atomic,
}

/// One step of an extent's program, on a stack of integers: `rows * cols`
/// is `[Param(2), Param(3), Mul]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtentTerm {
    /// Pushes the value of the kernel's parameter at this position.
    Param(u16),
    /// Pushes this number.
    Literal(u64),
    /// Pops `b`, then `a`; pushes `a + b`.
    Add,
    /// Pops `b`, then `a`; pushes `a - b`.
    Sub,
    /// Pops `b`, then `a`; pushes `a * b`.
    Mul,
    /// Pops `b`, then `a`; pushes `a / b`.
    Div,
    /// Pops `b`, then `a`; pushes the remainder of `a / b`.
    Rem,
}
