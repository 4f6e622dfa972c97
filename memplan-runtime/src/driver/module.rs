//! Modules of GPU code, their kernels, and launching them.

use super::error::{DriverError, check};
use super::ffi::{self as cu, Status};
use cust::sys::{CUfunction, CUfunction_attribute, CUmodule, CUstream};
use std::ffi::{CStr, c_int, c_uint, c_void};
use std::ptr::NonNull;
use std::sync::OnceLock;

/// Loads a module from an image in memory (`cuModuleLoadData`).
///
/// # Safety
/// `image` points to a complete fatbin, cubin or NUL-terminated PTX text:
/// every offset and length the driver follows lies within it.
#[inline]
pub(crate) unsafe fn module_load_data(image: *const c_void) -> Result<CUmodule, DriverError> {
    let mut module = std::ptr::null_mut();
    // SAFETY: writes the module handle; the image is the caller's promise.
    check(unsafe { cu::cuModuleLoadData(&mut module, image) })?;
    Ok(module)
}

/// Unloads a module (`cuModuleUnload`).
///
/// # Safety
/// `module` is live and unloaded once; none of its kernels is used again.
#[inline]
pub(crate) unsafe fn module_unload(module: CUmodule) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuModuleUnload(module) })
}

/// The kernel `name` of `module` (`cuModuleGetFunction`); its handle lives
/// as long as the module.
///
/// # Safety
/// `module` is live.
#[inline]
pub(crate) unsafe fn module_get_function(
    module: CUmodule,
    name: &CStr,
) -> Result<CUfunction, DriverError> {
    let mut function = std::ptr::null_mut();
    // SAFETY: writes the handle; a NUL-terminated name; the module is the
    // caller's promise.
    check(unsafe { cu::cuModuleGetFunction(&mut function, module, name.as_ptr()) })?;
    Ok(function)
}

/// One of a kernel's attributes on its GPU (`cuFuncGetAttribute`).
///
/// # Safety
/// `function` is live (its module loaded).
#[inline]
pub(crate) unsafe fn func_get_attribute(
    attribute: CUfunction_attribute,
    function: CUfunction,
) -> Result<c_int, DriverError> {
    let mut value = 0;
    // SAFETY: writes the value; the handle is the caller's promise.
    check(unsafe { cu::cuFuncGetAttribute(&mut value, attribute, function) })?;
    Ok(value)
}

/// Sets one of a kernel's attributes (`cuFuncSetAttribute`); the driver
/// checks the value.
///
/// # Safety
/// `function` is live (its module loaded).
#[inline]
pub(crate) unsafe fn func_set_attribute(
    function: CUfunction,
    attribute: CUfunction_attribute,
    value: c_int,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuFuncSetAttribute(function, attribute, value) })
}

/// Queues `function` on `stream` with `grid` x `block` threads (each as
/// x, y, z) and `shared_bytes` of dynamic shared memory
/// (`cuLaunchKernel`). The arguments go by `kernelParams`; memplan never
/// uses the packed `extra` form.
///
/// # Safety
/// `function` is live; `stream` is live, or the legacy stream (null);
/// `arguments` holds one pointer per kernel parameter, each to a value of
/// the parameter's type, valid during the call; the memory the kernel
/// reaches stays allocated, and the host off it, until `stream` has
/// finished the kernel.
#[inline]
pub(crate) unsafe fn launch_kernel(
    function: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_bytes: c_uint,
    stream: CUstream,
    arguments: *mut *mut c_void,
) -> Result<(), DriverError> {
    let ([grid_x, grid_y, grid_z], [block_x, block_y, block_z]) = (grid, block);
    // SAFETY: forwarded to the caller.
    check(unsafe {
        cu::cuLaunchKernel(
            function,
            grid_x,
            grid_y,
            grid_z,
            block_x,
            block_y,
            block_z,
            shared_bytes,
            stream,
            arguments,
            std::ptr::null_mut(),
        )
    })
}

/// A driver function by name, as the driver of `cuda_version` gives it
/// (`cuGetProcAddress`, default flags): one cust_raw (CUDA 11) does not
/// declare; `None` if the driver has none.
pub(crate) fn get_proc_address(symbol: &CStr, cuda_version: c_int) -> Option<NonNull<c_void>> {
    let mut function = std::ptr::null_mut();
    // SAFETY: a NUL-terminated name; writes one pointer.
    check(unsafe { cu::cuGetProcAddress(symbol.as_ptr(), &mut function, cuda_version, 0) }).ok()?;
    NonNull::new(function)
}

/// `cuFuncGetParamInfo` (CUDA 12.4), which cust_raw (CUDA 11) does not
/// declare: found at run time by [`func_get_param_info`].
#[derive(Clone, Copy)]
pub(crate) struct FuncGetParamInfo(ParamInfoFn);

/// `cuFuncGetParamInfo`'s C signature.
type ParamInfoFn = unsafe extern "C" fn(CUfunction, usize, *mut usize, *mut usize) -> Status;

/// The driver's `cuFuncGetParamInfo`, asked for once; `None` where the
/// driver predates it.
pub(crate) fn func_get_param_info() -> Option<FuncGetParamInfo> {
    static FOUND: OnceLock<Option<FuncGetParamInfo>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        // 12040 asks for the function as CUDA 12.4 introduced it.
        let function = get_proc_address(c"cuFuncGetParamInfo", 12040)?;
        // SAFETY: the driver's `cuFuncGetParamInfo`, whose C signature
        // `ParamInfoFn` states.
        Some(FuncGetParamInfo(unsafe {
            std::mem::transmute::<*mut c_void, ParamInfoFn>(function.as_ptr())
        }))
    })
}

impl FuncGetParamInfo {
    /// Where the compiled kernel expects parameter `index` in its argument
    /// buffer, as (offset, size); `CUDA_ERROR_INVALID_VALUE` for an index
    /// past the last parameter.
    ///
    /// # Safety
    /// `function` is live (its module loaded).
    #[inline]
    pub(crate) unsafe fn call(
        self,
        function: CUfunction,
        index: usize,
    ) -> Result<(usize, usize), DriverError> {
        let (mut offset, mut size) = (0, 0);
        // SAFETY: writes two integers; the handle is the caller's promise.
        check(unsafe { (self.0)(function, index, &mut offset, &mut size) })?;
        Ok((offset, size))
    }
}
