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
    /// Which of the kernel's compiled forms wait for the work queued
    /// before them before they touch memory, as `memplan-build` proved it.
    pub waits_first: WaitsFirst,
}

/// Which of a kernel's compiled forms open by waiting for the work queued
/// before them on their stream (`griddepcontrol.wait`, which
/// `cudaGridDependencySynchronize()` compiles to) before they touch
/// memory, proved from the PTX each form was compiled from: where the form
/// a GPU runs is one of them, memplan lets the kernel start while the
/// work before it finishes (programmatic dependent launch).
///
/// Each form is named by its architecture: `90` is `sm_90` machine code,
/// compiled from `compute_90` PTX, or that PTX itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitsFirst {
    /// The machine code, by architecture, and whether it waits first.
    pub machine_code: &'static [(u32, bool)],
    /// The PTX, by virtual architecture, and whether it waits first.
    pub ptx: &'static [(u32, bool)],
}

impl WaitsFirst {
    /// Nothing known: no form waits first.
    pub const UNKNOWN: WaitsFirst = WaitsFirst {
        machine_code: &[],
        ptx: &[],
    };

    /// Whether the form a GPU of compute capability `capability` (`90`
    /// for 9.0) runs waits first, whichever the driver picks: the machine
    /// code of its major version with the highest minor not above its
    /// own, or, where there is none (or `CUDA_FORCE_PTX_JIT` is set), the
    /// PTX of the highest architecture not above it. Both must wait where
    /// both exist; a GPU older than 9.0 cannot launch early at all.
    pub fn on(&self, capability: u32) -> bool {
        let pick = |forms: &[(u32, bool)], fits: &dyn Fn(u32) -> bool| {
            forms
                .iter()
                .filter(|(arch, _)| fits(*arch))
                .max_by_key(|(arch, _)| *arch)
                .map(|&(_, waits)| waits)
        };
        let machine = pick(self.machine_code, &|arch| {
            arch / 10 == capability / 10 && arch <= capability
        });
        let ptx = pick(self.ptx, &|arch| arch <= capability);
        capability >= 90
            && (machine.is_some() || ptx.is_some())
            && machine.unwrap_or(true)
            && ptx.unwrap_or(true)
    }
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

#[cfg(test)]
mod tests {
    use super::WaitsFirst;

    #[test]
    fn a_gpu_launches_early_only_where_the_form_it_runs_waits() {
        // memplan-build's default: machine code for sm_80 and sm_90, PTX
        // for compute_90; compute_80 cannot wait (no griddepcontrol).
        let default = WaitsFirst {
            machine_code: &[(80, false), (90, true)],
            ptx: &[(90, true)],
        };
        assert!(!default.on(80) && !default.on(86), "before 9.0, never");
        assert!(
            default.on(90),
            "sm_90's machine code and compute_90's PTX wait"
        );
        // 10.0 has no machine code of its major: it compiles compute_90.
        assert!(default.on(100) && default.on(120));
        // Machine code that waits, beside PTX that does not: a 9.0 GPU
        // told to compile PTX (CUDA_FORCE_PTX_JIT) would run the PTX.
        let old_ptx = WaitsFirst {
            machine_code: &[(90, true)],
            ptx: &[(80, false)],
        };
        assert!(!old_ptx.on(90) && !old_ptx.on(100));
        // Machine code alone: only its own major version runs it.
        let machine_only = WaitsFirst {
            machine_code: &[(90, true)],
            ptx: &[],
        };
        assert!(machine_only.on(90) && !machine_only.on(100));
        // The highest form not above the GPU decides.
        let two = WaitsFirst {
            machine_code: &[],
            ptx: &[(90, true), (100, false)],
        };
        assert!(two.on(90) && !two.on(100) && !two.on(120));
        assert!(!WaitsFirst::UNKNOWN.on(90));
    }
}
