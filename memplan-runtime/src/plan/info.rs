//! What `memplan!` emits for each plan: the plan's model (its
//! declarations and ops, every size a small program; `memplan-model`'s
//! vocabulary, shared with the macro) and beside it what only the user's
//! crate can name: each buffer's element type and each kernel's compiled
//! module. The engine builds the plan from it and runs it; nothing in it is
//! trusted beyond what [`Engine::new`](super::Engine::new) promises, and
//! every number in it is checked before it is used.

use crate::error::{Error, Fault, Location};
use crate::image::Image;
use crate::kernel::KernelValue;
use crate::memory::Element;
use memplan_model::ParamLayout;
use memplan_model::RustScalar;
use memplan_model::declaration::RustType;
use std::any::TypeId;
use std::ops::Deref;

pub use memplan_model::{
    Arg, Array, BufferKind, CollectiveInfo, CollectiveKind, Dims, Gpu, LaunchInfo, Op, Place,
    Shared, Term,
};

/// The model's types, as the runtime holds them: for the plan's lifetime.
pub type Site = memplan_model::Site<'static>;
pub type Size = memplan_model::Size<'static>;
pub type OpDef = memplan_model::OpDef<'static>;
pub type BufferInfo = memplan_model::BufferInfo<'static>;

/// A plan, as written: its model, and what only its crate can name.
pub struct PlanInfo {
    /// The plan's declarations and ops.
    pub model: memplan_model::Plan<'static>,
    /// The file the plan is written in (`file!()`): with each [`Site`](memplan_model::Site)'s
    /// line and column, where errors point.
    pub file: &'static str,
    /// Each buffer's element type, in the order of the model's buffers.
    pub elems: &'static [Elem],
    /// Each kernel's compiled code, in the order of the model's kernels.
    pub code: &'static [KernelCode],
}

/// A plan's description is its model, with links beside it: what the
/// model says reads as the plan's own (`info.ops`, `info.buffers`).
impl Deref for PlanInfo {
    type Target = memplan_model::Plan<'static>;

    fn deref(&self) -> &Self::Target {
        &self.model
    }
}

impl PlanInfo {
    /// Where `site` is written.
    pub(crate) fn location(&self, site: Site) -> Location {
        Location {
            file: self.file,
            line: site.1,
            column: site.2,
        }
    }

    /// An error of the declaration or op at `site`.
    pub(crate) fn error(&self, site: Site, fault: Fault) -> Error {
        Error::new(fault, site.0, self.location(site)).in_plan(self.name())
    }

    /// A runtime call's error, as the declaration or op at `site`'s.
    pub(crate) fn within(&self, site: Site, error: Error) -> Error {
        error.within(self.name(), site.0, self.location(site))
    }

    /// An error of the plan as a whole, doing `operation`.
    pub(crate) fn error_at_plan(&self, operation: &'static str, fault: Fault) -> Error {
        Error::new(fault, operation, self.location(self.site)).in_plan(self.name())
    }

    /// The element type of buffer `buffer`.
    pub(crate) fn elem(&self, buffer: u16) -> Result<Elem, Fault> {
        self.elems.get(usize::from(buffer)).copied().or_malformed()
    }

    /// The compiled code of kernel `kernel`.
    pub(crate) fn kernel_code(&self, kernel: u16) -> Result<&'static KernelCode, Fault> {
        let code: &'static [KernelCode] = self.code;
        code.get(usize::from(kernel)).or_malformed()
    }
}

/// A kernel's compiled code: symbol `entry` of `module`, taking parameters
/// of `params`' types (their layouts checked at `new` against the compiled
/// kernel).
#[derive(Debug)]
pub struct KernelCode {
    /// The symbol in the module.
    pub entry: &'static str,
    /// The compiled module; kernels of one module share one load.
    pub module: &'static Image,
    /// How the plan passes each parameter.
    pub params: &'static [ParamType],
}

impl KernelCode {
    /// Symbol `entry` of `module`, taking parameters of `params`' types.
    pub const fn new(
        entry: &'static str,
        module: &'static Image,
        params: &'static [ParamType],
    ) -> KernelCode {
        KernelCode {
            entry,
            module,
            params,
        }
    }
}

/// How the plan passes one kernel parameter: a device address, or a value
/// of a type, as the type itself says (its `KernelValue` impl, never its
/// spelling), so that a value given or computed for the parameter is of
/// that type and an integer computed from a size is written in its width
/// and signedness.
#[derive(Clone, Copy)]
pub enum ParamType {
    /// A buffer's device address.
    Pointer,
    /// A value of a Rust type.
    Value {
        /// The type, as its `KernelValue` impl describes it.
        rust: RustType,
        /// The type's id, which a value given for the parameter must have.
        id: fn() -> TypeId,
    },
}

impl ParamType {
    /// A buffer's device address (`CUdeviceptr`), as C++ pointers are passed.
    pub const POINTER: ParamType = ParamType::Pointer;

    /// A value of type `T`.
    pub const fn of<T: KernelValue>() -> ParamType {
        ParamType::Value {
            rust: crate::declaration::rust_type::<T>(),
            id: TypeId::of::<T>,
        }
    }

    pub(crate) fn layout(&self) -> ParamLayout {
        match self {
            ParamType::Pointer => ParamLayout::POINTER,
            ParamType::Value { rust, .. } => rust.layout,
        }
    }

    /// Whether a value of type `id` is what this parameter takes.
    pub(crate) fn takes(&self, id: TypeId) -> bool {
        matches!(self, ParamType::Value { id: own, .. } if own() == id)
    }

    /// The parameter's integer type, if it is a value of one.
    pub(crate) fn integer(&self) -> Option<RustScalar> {
        use RustScalar::*;
        match self {
            ParamType::Value { rust, .. } => match rust.scalar {
                scalar @ (I8 | U8 | I16 | U16 | I32 | U32 | I64 | U64 | Isize | Usize) => {
                    Some(scalar)
                }
                _ => None,
            },
            ParamType::Pointer => None,
        }
    }
}

/// Without the type's id, which is an address: the ranks of a job compare
/// what this prints (see `fingerprint.rs`), and each process has its own.
impl std::fmt::Debug for ParamType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamType::Pointer => write!(f, "Pointer"),
            ParamType::Value { rust, .. } => write!(f, "Value({rust:?})"),
        }
    }
}

/// An element type: its size, and which type it is. Only [`Elem::of`]
/// makes one, so the two always agree.
#[derive(Clone, Copy)]
pub struct Elem {
    size: usize,
    type_id: fn() -> TypeId,
    type_name: fn() -> &'static str,
}

impl Elem {
    /// The element type `T`.
    pub const fn of<T: Element>() -> Elem {
        Elem {
            size: size_of::<T>(),
            type_id: TypeId::of::<T>,
            type_name: std::any::type_name::<T>,
        }
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The type's name, as Rust spells it (`f32`, `my_crate::Pixel`).
    pub(crate) fn name(&self) -> &'static str {
        (self.type_name)()
    }

    pub(crate) fn is<T: 'static>(&self) -> bool {
        (self.type_id)() == TypeId::of::<T>()
    }

    pub(crate) fn same_as(&self, other: &Elem) -> bool {
        (self.type_id)() == (other.type_id)()
    }
}

impl std::fmt::Debug for Elem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Elem({} bytes)", self.size)
    }
}

/// The element type `T`, for a [`PlanInfo`]'s `elems`.
pub const fn elem<T: Element>() -> Elem {
    Elem::of::<T>()
}

/// The description disagrees with itself: a bug of memplan's, reported
/// rather than trusted.
pub(crate) const MALFORMED: Fault = Fault::Unsupported(
    "the plan's description is inconsistent (a bug in memplan; please report it)",
);

/// An op run before it was resolved: a bug in memplan, as `MALFORMED` is.
pub(crate) const UNRESOLVED: Fault = Fault::Unsupported(
    "memplan ran an op it had not resolved (a bug in memplan; please report it)",
);

/// One of memplan's own bugs for what it names but cannot find, made only
/// then: `ok_or(MALFORMED)` would make the error, and drop it (an
/// out-of-line call, since a `Fault` may own text), every time, on paths a
/// run takes for each op.
pub(crate) trait OrBug<T>: Sized {
    fn or_fault(self, fault: fn() -> Fault) -> Result<T, Fault>;

    /// `MALFORMED`: the description names what it does not have.
    #[inline]
    fn or_malformed(self) -> Result<T, Fault> {
        self.or_fault(|| MALFORMED)
    }

    /// `UNRESOLVED`: a step names what its run does not have.
    #[inline]
    fn or_unresolved(self) -> Result<T, Fault> {
        self.or_fault(|| UNRESOLVED)
    }
}

impl<T> OrBug<T> for Option<T> {
    #[inline]
    fn or_fault(self, fault: fn() -> Fault) -> Result<T, Fault> {
        match self {
            Some(found) => Ok(found),
            None => Err(fault()),
        }
    }
}
