//! Kernels: loading compiled modules, and launching their functions.

use crate::context::{Context, release_in};
use crate::driver::{self, DriverError};
use crate::error::{Fault, Location, Result, ResultExt};
use crate::image::{Format, Image};
use crate::stream::Stream;
use cust::memory::DeviceCopy;
use cust::sys::{CUfunction, CUfunction_attribute, CUmodule, CUstream};
use memplan_model::{KernelSignature, ParamSlot};
use std::ffi::{CString, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// A loaded module of GPU code (a fatbin, cubin or PTX image).
///
/// ```no_run
/// use memplan_runtime::{Context, Module};
/// # fn main() -> memplan_runtime::Result<()> {
/// let ctx = Context::new(0)?;
/// let module = Module::from_image(&ctx, &memplan_kernels::VECTOR_ADD)?;
/// let vadd = module.kernel("vadd")?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Module(Arc<Loaded>);

struct Loaded {
    raw: CUmodule,
    context: Context,
    /// The signatures of its kernels, where memplan-build made the image:
    /// which of their compiled forms wait first.
    kernels: Option<&'static [KernelSignature]>,
}

// SAFETY: module handles may be used from any thread of the process.
unsafe impl Send for Loaded {}
unsafe impl Sync for Loaded {}

impl Module {
    /// Loads an image (`cuModuleLoadData`): for a fatbin, the driver picks
    /// the machine code for this GPU or compiles its PTX; PTX text it
    /// compiles.
    #[track_caller]
    pub fn from_image(context: &Context, image: &Image) -> Result<Module> {
        match image.format() {
            // SAFETY: binary images hold bytes nvcc wrote (their
            // constructors' promise).
            Format::Binary => unsafe {
                Self::from_bytes_of(context, image.bytes(), image.kernels())
            },
            Format::Ptx => {
                let text = std::str::from_utf8(image.bytes());
                // `from_ptx` took a `&str`: it is text.
                Self::from_ptx(context, text.unwrap_or_default())
            }
            Format::Unbuilt => Err(Fault::Unsupported(
                "this module was built without nvcc (a documentation build, or MEMPLAN_NO_NVCC): \
                 build with a CUDA toolkit to run its kernels",
            ))
            .at("cuModuleLoadData", Location::caller()),
        }
    }

    /// Loads a fatbin or cubin from bytes of any origin (`cuModuleLoadData`).
    /// The outer headers are checked, and bytes that are not aligned to 8
    /// refused; what the driver reads beyond them is not.
    ///
    /// # Safety
    /// `bytes` is a complete fatbin or cubin: every offset and length inside
    /// it, which the driver follows, lies within `bytes`.
    #[track_caller]
    pub unsafe fn from_bytes(context: &Context, bytes: &[u8]) -> Result<Module> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_bytes_of(context, bytes, None) }
    }

    /// [`from_bytes`](Self::from_bytes), knowing the signatures of its
    /// kernels where memplan-build made the image.
    ///
    /// # Safety
    /// As for `from_bytes`.
    #[track_caller]
    unsafe fn from_bytes_of(
        context: &Context,
        bytes: &[u8],
        kernels: Option<&'static [KernelSignature]>,
    ) -> Result<Module> {
        let at = Location::caller();
        if bytes.as_ptr().align_offset(crate::image::ALIGNMENT) != 0 {
            return Err(Fault::Unsupported(
                "a module image must be aligned to 8 bytes (the driver reads its header as 8-byte words)",
            ))
            .at("cuModuleLoadData", at);
        }
        crate::image::check_image(bytes).at("cuModuleLoadData", at)?;
        Self::load(context, bytes.as_ptr().cast(), kernels, at)
    }

    /// Loads PTX source (`cuModuleLoadData`), compiling it for this GPU.
    #[track_caller]
    pub fn from_ptx(context: &Context, ptx: &str) -> Result<Module> {
        let at = Location::caller();
        let ptx = CString::new(ptx).map_err(|_| Fault::Unsupported("PTX text contains a NUL byte"));
        let ptx = ptx.at("cuModuleLoadData", at)?;
        Self::load(context, ptx.as_ptr().cast(), None, at)
    }

    fn load(
        context: &Context,
        image: *const c_void,
        kernels: Option<&'static [KernelSignature]>,
        at: Location,
    ) -> Result<Module> {
        context.bind_to_thread()?;
        // SAFETY: `image` points to a complete image; the driver reads it
        // during this call only.
        let raw = unsafe { driver::module_load_data(image) }.at("cuModuleLoadData", at)?;
        Ok(Module(Arc::new(Loaded {
            raw,
            context: context.clone(),
            kernels,
        })))
    }

    /// How kernel `symbol` is launched early on this module's GPU, where
    /// memplan-build proved that the form of it this GPU runs waits for
    /// the work before it first and the driver can; `None` elsewhere.
    fn launches_early(&self, symbol: &str) -> Result<Option<driver::LaunchEarly>> {
        let Some(signature) = self
            .0
            .kernels
            .and_then(|kernels| kernels.iter().find(|k| k.symbol == symbol))
        else {
            return Ok(None);
        };
        let (major, minor) = self.0.context.compute_capability()?;
        let capability = u32::try_from(major * 10 + minor).unwrap_or(0);
        Ok(driver::launch_early().filter(|_| signature.waits_first.on(capability)))
    }

    /// The kernel named `name` (its `extern "C"` name).
    #[track_caller]
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let at = Location::caller();
        let c_name = CString::new(name)
            .map_err(|_| Fault::Unsupported("kernel name contains a NUL byte"))
            .at("cuModuleGetFunction", at)?;
        self.0.context.bind_to_thread()?;
        // SAFETY: a live module; the function handle lives as long as it.
        let raw = match unsafe { driver::module_get_function(self.0.raw, &c_name) } {
            Err(DriverError::NOT_FOUND) => {
                Err(Fault::KernelNotFound(name.to_owned())).at("cuModuleGetFunction", at)
            }
            found => found.at("cuModuleGetFunction", at),
        }?;
        Ok(Kernel {
            raw,
            early: self.launches_early(name)?,
            _module: self.clone(),
            attributes: Arc::new([const { AtomicU32::new(UNREAD) }; ATTRIBUTES_KEPT]),
        })
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        // SAFETY: loaded in `load`, unloaded once; every kernel holds the module.
        release_in(&self.context, || unsafe { driver::module_unload(self.raw) });
    }
}

/// A kernel function of a loaded [`Module`]; keeps its module loaded.
#[derive(Clone)]
pub struct Kernel {
    raw: CUfunction,
    /// How it is launched early (programmatic dependent launch), where it
    /// is: see [`launches_early`](Kernel::launches_early).
    early: Option<driver::LaunchEarly>,
    _module: Module,
    /// The attributes plans check launches against, read from the driver
    /// once: a plan resolves a launch at every run that changes it, and a
    /// `cuFuncGetAttribute` there cost a quarter of a launch. Shared by
    /// clones, which are the same function.
    attributes: Arc<[AtomicU32; ATTRIBUTES_KEPT]>,
}

/// The attributes a [`Kernel`] keeps, by their place in its array.
const KEPT: [CUfunction_attribute; ATTRIBUTES_KEPT] = [
    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
    CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
];
const ATTRIBUTES_KEPT: usize = 3;
/// A kept attribute not read yet.
const UNREAD: u32 = u32::MAX;

// SAFETY: function handles may be used from any thread of the process.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    /// The driver's handle (`CUfunction`), for calls memplan does not wrap;
    /// valid while the kernel lives.
    pub fn raw(&self) -> CUfunction {
        self.raw
    }

    /// Whether its launches may start while the kernel before them on
    /// their stream still runs (programmatic dependent launch): where
    /// memplan-build proved that the compiled form this GPU runs waits for
    /// the work before it (`memplan_wait_for_previous()`, or
    /// `cudaGridDependencySynchronize()`) before it touches memory, on a
    /// GPU of compute capability 9.0 or newer. Only kernels of images
    /// memplan-build made can be.
    pub fn launches_early(&self) -> bool {
        self.early.is_some()
    }

    /// Queues the kernel on `stream` (`cuLaunchKernel`; `cuLaunchKernelEx`
    /// for a kernel that [launches early](Self::launches_early)).
    ///
    /// `args` is a tuple of the kernel's arguments in order: [`DevicePtr`]s
    /// for pointer parameters, plain values for the rest.
    ///
    /// # Safety
    /// The tuple's types match the kernel's C++ parameters. The kernel only
    /// touches memory inside the buffers its pointers point to, and that
    /// memory stays allocated, and untouched by the host, until `stream`
    /// has finished the kernel.
    ///
    /// [`DevicePtr`]: crate::DevicePtr
    pub unsafe fn launch<A: KernelArgs>(
        &self,
        stream: &Stream,
        config: LaunchConfig,
        args: A,
    ) -> Result<(), Fault> {
        // SAFETY: forwarded to the caller.
        unsafe { self.launch_on(stream.raw(), config, args) }
    }

    /// [`launch`](Self::launch) on a raw stream handle; 0 is the legacy
    /// default stream, which plans use for their synchronous launches.
    ///
    /// # Safety
    /// As for [`launch`](Self::launch).
    pub unsafe fn launch_on<A: KernelArgs>(
        &self,
        stream: CUstream,
        config: LaunchConfig,
        mut args: A,
    ) -> Result<(), Fault> {
        // SAFETY: `pointers` point to the argument values, which live until
        // the driver has copied them during this call; the caller vouches
        // for their types and for the memory they reach.
        args.with_pointers(|pointers| unsafe {
            self.launch_raw(stream, config, pointers.as_mut_ptr())
        })?;
        Ok(())
    }

    /// The launch with an array of pointers to the argument values: early
    /// where the kernel may be, else `cuLaunchKernel`.
    ///
    /// # Safety
    /// `arguments` holds one pointer per kernel parameter, each to a value
    /// of the parameter's type, valid during the call; the memory the
    /// kernel reaches is as for [`launch`](Self::launch).
    pub(crate) unsafe fn launch_raw(
        &self,
        stream: CUstream,
        config: LaunchConfig,
        arguments: *mut *mut c_void,
    ) -> Result<(), DriverError> {
        let LaunchConfig {
            grid,
            block,
            shared_bytes,
        } = config;
        let (grid, block) = ([grid.x, grid.y, grid.z], [block.x, block.y, block.z]);
        // SAFETY: a live function handle (its module is held); early only
        // where the code this GPU runs waits for the work before it first
        // (`launches_early`); the rest is forwarded to the caller.
        unsafe {
            match self.early {
                Some(early) => early.launch(self.raw, grid, block, shared_bytes, stream, arguments),
                None => {
                    driver::launch_kernel(self.raw, grid, block, shared_bytes, stream, arguments)
                }
            }
        }
    }

    /// Where the compiled kernel expects each of its parameters in the
    /// argument buffer the driver builds (`cuFuncGetParamInfo`), in order;
    /// `None` from a driver older than CUDA 12.4, which cannot tell.
    ///
    /// This is the compiled code's own account, whatever the module's
    /// origin: plans compare it with the declaration at `new`.
    pub fn parameters(&self) -> Result<Option<Vec<ParamSlot>>, DriverError> {
        let Some(param_info) = driver::func_get_param_info() else {
            return Ok(None);
        };
        let mut slots = Vec::new();
        // A parameter takes at least a byte of the 32 KiB parameter space.
        while slots.len() <= MAX_PARAMETER_BYTES {
            // SAFETY: a live function handle.
            match unsafe { param_info.call(self.raw, slots.len()) } {
                Ok((offset, size)) => slots.push(ParamSlot { offset, size }),
                // The index is past the last parameter.
                Err(DriverError::INVALID_VALUE) => return Ok(Some(slots)),
                Err(error) => return Err(error),
            }
        }
        Err(DriverError::INVALID_VALUE)
    }

    /// One of the kernel's attributes on this GPU (`cuFuncGetAttribute`),
    /// read once for those it keeps.
    pub(crate) fn attribute(&self, attribute: CUfunction_attribute) -> Result<u32, DriverError> {
        let kept = KEPT.iter().position(|&k| k == attribute);
        if let Some(at) = kept {
            let value = self.attributes[at].load(Ordering::Relaxed);
            if value != UNREAD {
                return Ok(value);
            }
        }
        // SAFETY: a live function handle.
        let value = unsafe { driver::func_get_attribute(attribute, self.raw) }?;
        let value = u32::try_from(value).unwrap_or(0);
        if let Some(at) = kept {
            self.attributes[at].store(value, Ordering::Relaxed);
        }
        Ok(value)
    }

    /// Sets one of the kernel's attributes (`cuFuncSetAttribute`).
    pub(crate) fn set_attribute(
        &self,
        attribute: CUfunction_attribute,
        value: u32,
    ) -> Result<(), DriverError> {
        let signed = i32::try_from(value).map_err(|_| DriverError::INVALID_VALUE)?;
        // Read again when next asked: what the driver keeps may differ from
        // what was asked for.
        if let Some(at) = KEPT.iter().position(|&k| k == attribute) {
            self.attributes[at].store(UNREAD, Ordering::Relaxed);
        }
        // SAFETY: a live function handle; the driver checks the value.
        unsafe { driver::func_set_attribute(self.raw, attribute, signed) }
    }
}

/// The most bytes of parameters a kernel takes (CUDA 12.1 and later).
const MAX_PARAMETER_BYTES: usize = 32764;

/// Grid or block dimensions. Converts from `u32` and from tuples of two or
/// three `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// How many along x: blocks of a grid, or threads of a block.
    pub x: u32,
    /// How many along y; 1 for one dimension.
    pub y: u32,
    /// How many along z; 1 for one or two dimensions.
    pub z: u32,
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3 { x, y, z }
    }
}

/// A launch's grid, block and dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// The grid's dimensions, in blocks.
    pub grid: Dim3,
    /// The block's dimensions, in threads.
    pub block: Dim3,
    /// The bytes of dynamic shared memory each block gets.
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A configuration of `grid` blocks of `block` threads, with
    /// `shared_bytes` of dynamic shared memory a block.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>, shared_bytes: u32) -> Self {
        Self {
            grid: grid.into(),
            block: block.into(),
            shared_bytes,
        }
    }
}

/// Blocks of `per_block` threads needed to cover `n` elements (rounded up).
/// A count above `u32::MAX` saturates, and the launch then fails with the
/// driver's error instead of silently covering too little.
///
/// ```
/// assert_eq!(memplan_runtime::blocks(1000, 256), 4);
/// assert_eq!(memplan_runtime::blocks(1024, 256), 4);
/// assert_eq!(memplan_runtime::blocks(0, 256), 0);
/// ```
pub fn blocks(n: usize, per_block: u32) -> u32 {
    let per_block = per_block.max(1) as usize;
    u32::try_from(n.div_ceil(per_block)).unwrap_or(u32::MAX)
}

/// A type a plan may pass to a kernel as a value parameter: plain data, with
/// no pointer inside. Memory reaches a plan's kernels only as buffer
/// arguments, which the plan's checks track; a device address smuggled in
/// a value (a [`DevicePtr`](crate::DevicePtr), say) would escape them.
///
/// Implemented for the integer and float types, `bool`, and arrays of
/// them. A kernel parameter of a C++ class (`struct Window`, `float4`),
/// by value or as the element a pointer points to, takes a Rust type whose
/// impl names the class in [`CPP_NAME`](Self::CPP_NAME); the declaration
/// check then compares its size and alignment with the class's as nvcc
/// laid it out. For a `#[repr(C)]` struct that mirrors a C++ one:
///
/// ```
/// #[repr(C)]
/// #[derive(Clone, Copy)]
/// struct Window {
///     width: u32,
///     height: u32,
///     scale: f32,
/// }
/// // SAFETY: plain numbers, laid out as the kernel's C++ `struct Window`.
/// unsafe impl memplan_runtime::KernelValue for Window {
///     const CPP_NAME: Option<&'static str> = Some("Window");
/// }
/// ```
///
/// # Safety
/// The type is plain data: no pointers, references or handles, and every
/// byte the kernel reads is initialized (no padding the kernel looks at).
/// Its layout is the one the kernel's C++ parameter has; with a
/// `CPP_NAME`, field for field the layout of that C++ class, which holds
/// no pointer either.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a type a kernel can take as a value or point to",
    note = "a C++ class is mirrored by a `#[repr(C)]` type with `unsafe impl memplan::KernelValue` naming it in `CPP_NAME`"
)]
pub unsafe trait KernelValue: Copy + 'static {
    /// The C++ class, struct or vector type this type mirrors, by its
    /// qualified name as nvcc spells it (`"float4"`, `"ns::Window"`);
    /// `None` (the default) for a type that mirrors no class. Only a type
    /// that names a class matches a kernel parameter of that class.
    const CPP_NAME: Option<&'static str> = None;

    /// Which primitive the type is, for the declaration check: only
    /// memplan's own impls say, so that the check reads the type itself,
    /// never its spelling (`c_int` is `i32`; a type of the user's named
    /// `f32` is not).
    #[doc(hidden)]
    const PRIMITIVE: Option<memplan_model::RustScalar> = None;
}

macro_rules! kernel_values {
    ($($ty:ident $scalar:ident),*) => {
        $(
            // SAFETY: a plain number.
            unsafe impl KernelValue for $ty {
                const PRIMITIVE: Option<memplan_model::RustScalar> =
                    Some(memplan_model::RustScalar::$scalar);
            }
        )*
    };
}
kernel_values!(
    i8 I8, i16 I16, i32 I32, i64 I64, isize Isize, u8 U8, u16 U16, u32 U32, u64 U64, usize Usize,
    f32 F32, f64 F64, bool Bool
);
// SAFETY: arrays of plain data are plain data.
unsafe impl<T: KernelValue, const N: usize> KernelValue for [T; N] {}

/// A tuple of kernel arguments.
///
/// # Safety
/// `with_pointers` passes one pointer per argument, in order, each to a
/// value of that argument's type.
pub unsafe trait KernelArgs {
    /// Calls `f` with one pointer to each argument, in order, as
    /// `cuLaunchKernel` takes them; the pointers are valid only during the
    /// call.
    fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R;
}

macro_rules! kernel_args {
    ($($name:ident . $index:tt),*) => {
        // SAFETY: one pointer per tuple field, in order.
        unsafe impl<$($name: DeviceCopy),*> KernelArgs for ($($name,)*) {
            fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
                let mut pointers = [$((&raw mut self.$index).cast::<c_void>()),*];
                f(&mut pointers)
            }
        }
    };
}

// SAFETY: a kernel without parameters gets an empty argument array.
unsafe impl KernelArgs for () {
    fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
        f(&mut [])
    }
}
kernel_args!(A.0);
kernel_args!(A.0, B.1);
kernel_args!(A.0, B.1, C.2);
kernel_args!(A.0, B.1, C.2, D.3);
kernel_args!(A.0, B.1, C.2, D.3, E.4);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5, G.6);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10);
kernel_args!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10, L.11);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_pointers_point_at_the_values_in_order() {
        let mut args = (7u64, 2.5f32, -3i32);
        args.with_pointers(|pointers| {
            assert_eq!(pointers.len(), 3);
            // SAFETY: the pointers point into `args`, typed as listed.
            unsafe {
                assert_eq!(*pointers[0].cast::<u64>(), 7);
                assert_eq!(*pointers[1].cast::<f32>(), 2.5);
                assert_eq!(*pointers[2].cast::<i32>(), -3);
            }
        });
    }

    #[test]
    fn launch_dimensions_convert_from_scalars_and_tuples() {
        assert_eq!(Dim3::from(256), Dim3 { x: 256, y: 1, z: 1 });
        assert_eq!(Dim3::from((16, 8)), Dim3 { x: 16, y: 8, z: 1 });
        let config = LaunchConfig::new(blocks(1 << 20, 256), 256, 0);
        assert_eq!(config.grid.x, 4096);
    }
}
