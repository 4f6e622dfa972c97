//! One error type for everything that can go wrong at run time: it says
//! what failed (the CUDA error, a range outside a buffer...), which
//! operation it was, and where that operation is in your source.

use crate::driver::DriverError;
use memplan_model::ParamSlot;
use std::fmt;

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where an operation was written: a plan op's line, or the caller of a
/// runtime function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The source file, as `file!()` gives it.
    pub file: &'static str,
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1.
    pub column: u32,
}

impl Location {
    /// The location of the caller of a `#[track_caller]` function.
    #[track_caller]
    pub fn caller() -> Self {
        Self::from(std::panic::Location::caller())
    }
}

impl From<&'static std::panic::Location<'static>> for Location {
    fn from(location: &'static std::panic::Location<'static>) -> Self {
        Self {
            file: location.file(),
            line: location.line(),
            column: location.column(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// What went wrong, without where.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The driver refused the call.
    Driver(DriverError),
    /// A range reaches past the end of a buffer.
    OutOfBounds {
        /// The range's first element.
        start: usize,
        /// The element after the range's last.
        end: usize,
        /// The buffer's length, in elements.
        len: usize,
    },
    /// A range whose start is after its end.
    ReversedRange {
        /// The range's start.
        start: usize,
        /// The range's end, below its start.
        end: usize,
    },
    /// An index into a set of streams, events or buffers past its end.
    Element {
        /// The index asked for.
        index: usize,
        /// How many the set has.
        count: usize,
    },
    /// A caller's slice whose length is not the one the plan declares.
    WrongLength {
        /// The length the plan declares.
        expected: usize,
        /// The slice's length.
        actual: usize,
    },
    /// A copy between ranges of different lengths.
    LengthMismatch {
        /// The source's length, in elements.
        source: usize,
        /// The destination's length, in elements.
        destination: usize,
    },
    /// A copy whose source and destination share memory.
    OverlappingCopy,
    /// Work in a [`scope`](crate::scope) touching memory that unordered work
    /// on another stream (queued at `other`) writes, or reads where this
    /// work writes.
    Unordered {
        /// Where the other work was queued.
        other: Location,
    },
    /// A size of a plan that cannot be computed without wrapping (or
    /// dividing by zero), and why.
    Size {
        /// The size as the plan writes it.
        size: &'static str,
        /// The step that failed, with its values (`4 - 5 is below zero`).
        problem: String,
    },
    /// A size parameter given a value above the bound the plan states for
    /// it (`run len: usize <= cap`), which the compile-time checks took
    /// as true.
    /// `size` is the parameter and `bound` its bound, as written.
    AboveBound {
        /// The parameter.
        size: &'static memplan_model::Size<'static>,
        /// The value it was given.
        value: usize,
        /// Its bound, as the plan writes it.
        bound: &'static memplan_model::Size<'static>,
        /// The bound's value, which `value` is above.
        limit: usize,
    },
    /// A launch configuration this GPU or kernel cannot run, and why.
    Launch(String),
    /// A byte count that does not fit in `usize`.
    SizeOverflow {
        /// The number of elements.
        len: usize,
        /// The bytes of each.
        element_size: usize,
    },
    /// `fill` with a value the driver's memset cannot write.
    UnsupportedFill {
        /// The bytes of each element: not 1, 2 or 4.
        element_size: usize,
    },
    /// A buffer that cannot do what was asked of it, and why.
    Unsupported(&'static str),
    /// A module without a kernel of this name.
    KernelNotFound(String),
    /// A buffer argument shorter than the elements its parameter's extent
    /// says the kernel touches.
    Extent {
        /// The parameter, as the kernel's declaration names it.
        param: &'static str,
        /// The elements the kernel touches through it.
        extent: usize,
        /// The elements the argument has.
        len: usize,
    },
    /// A launch whose grid is empty, so that it runs nothing, given a
    /// non-empty range for a parameter declared `&out`, which the checks
    /// count as written (`None`: a parameter without an extent).
    EmptyGridWrites {
        /// The parameter, as the kernel's declaration names it.
        param: Option<&'static str>,
        /// The elements of the range it was given.
        elements: usize,
    },
    /// An `&out` parameter whose extent the checks could not follow (it
    /// names values that are not sizes), so that they count the whole
    /// argument as written, given an argument longer than the extent.
    MeasuredWriteShort {
        /// The parameter, as the kernel's declaration names it.
        param: &'static str,
        /// The elements its extent says the kernel writes.
        extent: usize,
        /// The elements the argument has, more than `extent`.
        len: usize,
    },
    /// Another rank of a `ranks world` job made its plan otherwise: rank
    /// `rank` has `there` where this one has `here`, for size `name`, or
    /// (`None`) for the plan's fingerprint.
    RanksDisagree {
        /// The other rank.
        rank: usize,
        /// The size the two ranks differ in, or `None` for the plan itself.
        name: Option<&'static str>,
        /// This rank's value (`u64::MAX`: not yet known).
        here: u64,
        /// The other rank's value (`u64::MAX`: not yet known).
        there: u64,
    },
    /// Rank `rank` of a `ranks world` job could not make or run its plan
    /// (its own error says why): every rank stops there, as none may
    /// queue a collective another will never queue.
    RankFailed {
        /// The lowest-numbered rank that failed.
        rank: usize,
    },
    /// A negative value given to the parameter at `position` that the
    /// extent of `param` (computed from the values the kernel receives)
    /// names.
    NegativeExtentValue {
        /// The parameter whose extent names the value.
        param: &'static str,
        /// The position of the negative argument among the kernel's.
        position: usize,
        /// The argument.
        value: i64,
    },
    /// An argument an extent names that is not the size it was cast from
    /// (`n as i32` of an `n` above `i32::MAX`).
    ExtentArgument {
        /// The parameter the argument is given to.
        param: &'static str,
        /// As the kernel receives it. Only a narrower or signed type can
        /// differ from a `usize`, so every such value fits an `i64`.
        value: i64,
        /// The size it was cast from.
        size: usize,
    },
    /// A kernel whose parameters, as the driver reads the compiled code,
    /// lie elsewhere than its declaration passes them.
    KernelParameters {
        /// Where the declaration passes each parameter.
        declared: Vec<ParamSlot>,
        /// Where the compiled kernel takes each parameter.
        compiled: Vec<ParamSlot>,
    },
    /// The driver is a stub or sees no GPU.
    NoDevice(String),
    /// NCCL could not be loaded or started, or a call of it failed: why.
    Nccl(String),
    /// No launcher's variables are in the environment (the message lists
    /// every one looked for): the process was not started as a rank of a
    /// job ([`nccl::Job`](crate::nccl::Job)).
    NoLauncher(String),
    /// What the launcher's variables, `CUDA_VISIBLE_DEVICES`, `NCCL_COMM_ID`
    /// or `MEMPLAN_NCCL_ID` say cannot place this process in its job, or
    /// its ranks have nowhere to meet, and why.
    Launcher(String),
    /// A plan's collective whose GPUs' parts could never meet (a GPU that
    /// takes no part, parts that differ, or that wait for each other), and
    /// why: refused by `new`, before NCCL would wait for ever.
    Collective(String),
    /// A plan declaring `gpus gpu[g]` given another number of GPUs.
    GpuCount {
        /// The GPUs the plan declares.
        declared: usize,
        /// The contexts `new` was given.
        given: usize,
    },
    /// A plan declaring `gpus gpu[g]` with `g` 0: a plan on no GPUs
    /// could never run (`given`: the contexts `new` was given).
    NoGpus {
        /// The contexts `new` was given.
        given: usize,
    },
    /// A declaration placed on a GPU the plan was not given.
    NoSuchGpu {
        /// The GPU the declaration names.
        gpu: usize,
        /// The GPUs the plan runs on.
        count: usize,
    },
    /// Timing cannot be turned on, and why.
    Timing(String),
    /// [`DeviceModel::named`](crate::DeviceModel::named) given a name it
    /// has no limits for.
    UnknownDeviceModel {
        /// The name given, as given.
        name: String,
    },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Driver(error) => write!(f, "{error}"),
            Fault::Element { index, count } => {
                write!(f, "index {index} is past the end of a set of {count}")
            }
            Fault::OutOfBounds { start, end, len } => {
                write!(
                    f,
                    "range {start}..{end} is outside a buffer of {len} elements"
                )
            }
            Fault::ReversedRange { start, end } => {
                write!(f, "range {start}..{end} starts after it ends")
            }
            Fault::WrongLength { expected, actual } => write!(
                f,
                "the slice has {actual} elements, and the plan declares {expected}"
            ),
            Fault::LengthMismatch {
                source,
                destination,
            } => write!(
                f,
                "the source has {source} elements and the destination {destination}"
            ),
            Fault::OverlappingCopy => write!(
                f,
                "the source and destination of the copy overlap; copy through a second buffer"
            ),
            Fault::Unordered { other } => write!(
                f,
                "this touches memory that work queued at {other} on another stream also \
                 touches, one of them writing, and no event orders the two; `record` an \
                 event after that work and `wait` for it on this stream"
            ),
            Fault::Size { size, problem } => {
                write!(f, "the size `{size}` cannot be computed: {problem}")
            }
            Fault::AboveBound {
                size,
                value,
                bound,
                limit,
            } => {
                let (size, bound) = (size.0, bound.0);
                write!(
                    f,
                    "`{size}` is {value}, above its bound `{bound}`, {limit}: the plan's checks took \
                     `{size} <= {bound}` as true"
                )
            }
            Fault::Launch(why) => write!(f, "{why}"),
            Fault::SizeOverflow { len, element_size } => write!(
                f,
                "{len} elements of {element_size} bytes overflow the address space"
            ),
            Fault::UnsupportedFill { element_size } => write!(
                f,
                "fill of {element_size}-byte elements: the driver's memset writes 1, 2 or 4-byte \
                 patterns, so this value can only be written by a kernel"
            ),
            Fault::Unsupported(why) => write!(f, "{why}"),
            Fault::KernelNotFound(name) => write!(
                f,
                "the module has no kernel named `{name}` (is it declared extern \"C\" __global__?)"
            ),
            Fault::Extent { param, extent, len } => write!(
                f,
                "the kernel touches {extent} elements through `{param}` (its extent), and the \
                 argument has {len}"
            ),
            Fault::EmptyGridWrites { param, elements } => {
                let through = match param {
                    Some(param) => format!("`{param}`"),
                    None => "an `&out` parameter".to_owned(),
                };
                write!(
                    f,
                    "the launch's grid is empty, so the kernel runs nothing, yet it is given \
                     {elements} elements to write through {through}, which the plan's checks \
                     count as written; a launch that may be empty writes an empty range then \
                     (`blocks(len, 256)` with an extent of `len`)"
                )
            }
            Fault::MeasuredWriteShort { param, extent, len } => write!(
                f,
                "the kernel writes {extent} elements through `{param}` (its extent, from values \
                 that are not sizes of the plan), and the argument has {len}: the checks count \
                 such a write as writing its whole argument, so it must be as long as the \
                 extent (pass the range it writes, or write the extent with sizes)"
            ),
            Fault::RanksDisagree {
                rank, name: None, ..
            } => write!(
                f,
                "rank {rank} of the job runs another plan than this rank (its fingerprint \
                 differs): every rank of a job runs the same plan, or their collectives \
                 would not match"
            ),
            Fault::RanksDisagree {
                rank,
                name: Some(name),
                here,
                there,
            } => {
                let value = |v: &u64| match *v {
                    u64::MAX => "not yet known".to_owned(),
                    v => v.to_string(),
                };
                write!(
                    f,
                    "rank {rank} of the job made the plan with `{name}` {}, this rank with {}: \
                     every rank makes it with the same sizes, or their collectives would not \
                     match (NCCL would wait for ever)",
                    value(there),
                    value(here)
                )
            }
            Fault::RankFailed { rank } => write!(
                f,
                "rank {rank} of the job could not go on (its own error says why): every rank \
                 stops with it, since none may queue a collective another rank never will"
            ),
            Fault::NegativeExtentValue {
                param,
                position,
                value,
            } => write!(
                f,
                "the extent of `{param}` names the kernel's argument {position}, which is \
                 {value}: the kernel's own arithmetic on a negative value may reach further than \
                 memplan would read it to, so an extent is computed from values of 0 and up only"
            ),
            Fault::ExtentArgument { param, value, size } => write!(
                f,
                "`{param}` is {value} as the kernel receives it, cast from {size}: the cast \
                 changed the value, and the extents written with `{param}` would be wrong"
            ),
            Fault::KernelParameters { declared, compiled } => {
                let list = |slots: &[ParamSlot]| {
                    let slots: Vec<String> = slots
                        .iter()
                        .map(|slot| format!("{} at {}", slot.size, slot.offset))
                        .collect();
                    slots.join(", ")
                };
                let plural = if declared.len() == 1 { "" } else { "s" };
                write!(
                    f,
                    "the declaration does not match the compiled kernel: it passes {} \
                     parameter{plural} (bytes at offset: {}), and the kernel takes {} ({})",
                    declared.len(),
                    list(declared),
                    compiled.len(),
                    list(compiled)
                )
            }
            Fault::NoDevice(why) => write!(f, "no CUDA device: {why}"),
            Fault::Nccl(why) => write!(f, "NCCL: {why}"),
            Fault::NoLauncher(why) | Fault::Launcher(why) => write!(f, "{why}"),
            Fault::Collective(why) => write!(f, "{why}"),
            Fault::GpuCount { declared, given } => write!(
                f,
                "the plan runs on {declared} GPU{}, and {given} {} given (a context each to \
                 `new`, a device model each to `check`)",
                if *declared == 1 { "" } else { "s" },
                if *given == 1 { "was" } else { "were" }
            ),
            Fault::NoGpus { given } => write!(
                f,
                "a plan on GPUs needs at least one, and this count is 0 ({given} {} given)",
                if *given == 1 { "was" } else { "were" }
            ),
            Fault::Timing(why) => write!(f, "{why}"),
            Fault::UnknownDeviceModel { name } => {
                let known: Vec<&str> = crate::DeviceModel::known().collect();
                let (last, rest) = known.split_last().unwrap_or((&"", &[]));
                write!(
                    f,
                    "memplan has no device model named `{name}`: it has models of {} and \
                     {last} (an architecture-specific name, such as sm_90a, is its base's)",
                    rest.join(", ")
                )
            }
            Fault::NoSuchGpu { gpu, count } => write!(
                f,
                "this is placed on GPU {gpu}, and the plan runs on {count} (GPUs 0 to {})",
                count.saturating_sub(1)
            ),
        }
    }
}

impl From<DriverError> for Fault {
    fn from(error: DriverError) -> Self {
        Fault::Driver(error)
    }
}

/// A failed operation: what went wrong, which operation, and where.
///
/// ```
/// use memplan_runtime::{Error, Fault, Location};
/// let location = Location { file: "src/main.rs", line: 14, column: 13 };
/// let error = Error::new(
///     Fault::OutOfBounds { start: 0, end: 8, len: 4 },
///     "copy dc -> c",
///     location,
/// )
/// .in_plan("VectorAdd");
/// assert_eq!(
///     error.to_string(),
///     "plan VectorAdd: copy dc -> c at src/main.rs:14:13: range 0..8 is outside a buffer of 4 elements"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    fault: Fault,
    operation: &'static str,
    /// The runtime call that failed, when `operation` is a plan's op.
    call: Option<&'static str>,
    location: Location,
    plan: Option<&'static str>,
}

impl Error {
    /// An error of `operation`, written at `location`, that failed with
    /// `fault`.
    pub fn new(fault: Fault, operation: &'static str, location: Location) -> Self {
        Self {
            fault,
            operation,
            call: None,
            location,
            plan: None,
        }
    }

    /// The same error, reported as part of `operation` of `plan`, written at
    /// `location`; the call that failed stays in the message.
    pub fn within(self, plan: &'static str, operation: &'static str, location: Location) -> Self {
        Self {
            call: Some(self.operation),
            operation,
            location,
            plan: Some(plan),
            ..self
        }
    }

    /// The same error, naming the plan it happened in.
    pub fn in_plan(mut self, plan: &'static str) -> Self {
        self.plan = Some(plan);
        self
    }

    /// What went wrong.
    pub fn fault(&self) -> &Fault {
        &self.fault
    }

    /// The operation, `copy dc -> c` or `cuMemAlloc`.
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    /// Where the operation is written: the plan's op, or the caller of the
    /// runtime function.
    pub fn location(&self) -> Location {
        self.location
    }

    /// The plan the operation belongs to, if it is a plan's.
    pub fn plan(&self) -> Option<&'static str> {
        self.plan
    }

    /// The runtime call that failed, when the error names a plan's op.
    pub fn call(&self) -> Option<&'static str> {
        self.call
    }

    /// The CUDA error code, if the driver refused the call.
    pub fn driver_error(&self) -> Option<DriverError> {
        match self.fault {
            Fault::Driver(error) => Some(error),
            _ => None,
        }
    }

    /// Whether this machine simply has no usable GPU (no driver, a stub
    /// driver, or no device): programs that can run without one check this.
    pub fn is_no_device(&self) -> bool {
        match self.fault {
            Fault::NoDevice(_) => true,
            Fault::Driver(code) => [
                DriverError::NO_DEVICE,
                DriverError::STUB_LIBRARY,
                DriverError::NOT_INITIALIZED,
            ]
            .contains(&code),
            _ => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(plan) = self.plan {
            write!(f, "plan {plan}: ")?;
        }
        write!(f, "{} at {}: ", self.operation, self.location)?;
        if let Some(call) = self.call {
            write!(f, "{call}: ")?;
        }
        write!(f, "{}", self.fault)
    }
}

impl std::error::Error for Error {}

/// Attaches an operation and its location to a [`Fault`].
pub trait ResultExt<T> {
    /// The error names `operation`, written at `location`.
    fn at(self, operation: &'static str, location: Location) -> Result<T>;
}

impl<T, F: Into<Fault>> ResultExt<T> for Result<T, F> {
    fn at(self, operation: &'static str, location: Location) -> Result<T> {
        self.map_err(|fault| Error::new(fault.into(), operation, location))
    }
}
