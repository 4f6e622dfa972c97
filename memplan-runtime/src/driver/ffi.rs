//! The driver functions memplan calls, declared again with the status as a
//! plain integer.
//!
//! cust_raw's bindings return `CUresult` as a Rust enum made from CUDA 11's
//! headers. A newer driver returns codes that enum lacks (CUDA 13 added
//! `CUDA_ERROR_DEVICE_UNAVAILABLE`, `CUDA_ERROR_CONTAINED`, and more), and an
//! enum holding a value it does not list is undefined behaviour. These
//! declarations name the same symbols (so the driver stub made from
//! cust_raw's list still covers them) with the same parameter types, and
//! return [`Status`], which holds any code.

use cust::sys::{
    CUDA_KERNEL_NODE_PARAMS, CUDA_MEMSET_NODE_PARAMS, CUcontext, CUdevice, CUdevice_attribute,
    CUdeviceptr, CUevent, CUfunction, CUfunction_attribute, CUgraph, CUgraphExec, CUgraphNode,
    CUmodule, CUstream, CUstreamCaptureMode,
};
use std::ffi::{c_char, c_int, c_uchar, c_uint, c_ulonglong, c_ushort, c_void};

/// A `CUresult` as the integer the driver returns.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct Status(pub u32);

/// `CUDA_MEMCPY3D`, with each memory type as the integer the driver
/// writes (cust_raw's has an enum there, which a value it does not list
/// would make undefined behaviour). A copy node's parameters are read
/// into it and written back changed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)] // the field names of the CUDA headers
pub struct Memcpy3d {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcZ: usize,
    pub srcLOD: usize,
    pub srcMemoryType: c_uint,
    pub srcHost: *const c_void,
    pub srcDevice: CUdeviceptr,
    pub srcArray: *mut c_void,
    pub reserved0: *mut c_void,
    pub srcPitch: usize,
    pub srcHeight: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstZ: usize,
    pub dstLOD: usize,
    pub dstMemoryType: c_uint,
    pub dstHost: *mut c_void,
    pub dstDevice: CUdeviceptr,
    pub dstArray: *mut c_void,
    pub reserved1: *mut c_void,
    pub dstPitch: usize,
    pub dstHeight: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
    pub Depth: usize,
}

// The same layout as the CUDA headers' (and cust_raw's) struct.
const _: () = {
    use cust::sys::CUDA_MEMCPY3D as Theirs;
    use std::mem::offset_of;
    assert!(size_of::<Memcpy3d>() == size_of::<Theirs>());
    assert!(offset_of!(Memcpy3d, srcMemoryType) == offset_of!(Theirs, srcMemoryType));
    assert!(offset_of!(Memcpy3d, srcDevice) == offset_of!(Theirs, srcDevice));
    assert!(offset_of!(Memcpy3d, dstMemoryType) == offset_of!(Theirs, dstMemoryType));
    assert!(offset_of!(Memcpy3d, dstDevice) == offset_of!(Theirs, dstDevice));
    assert!(offset_of!(Memcpy3d, WidthInBytes) == offset_of!(Theirs, WidthInBytes));
    assert!(offset_of!(Memcpy3d, Depth) == offset_of!(Theirs, Depth));
};

#[allow(non_snake_case)] // the parameter names of the CUDA headers
unsafe extern "C" {
    pub fn cuCtxGetStreamPriorityRange(
        leastPriority: *mut c_int,
        greatestPriority: *mut c_int,
    ) -> Status;
    pub fn cuCtxSetCurrent(ctx: CUcontext) -> Status;
    pub fn cuCtxSynchronize() -> Status;
    pub fn cuCtxPushCurrent_v2(ctx: CUcontext) -> Status;
    pub fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) -> Status;
    pub fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> Status;
    pub fn cuDeviceGetAttribute(
        pi: *mut c_int,
        attrib: CUdevice_attribute,
        dev: CUdevice,
    ) -> Status;
    pub fn cuDeviceGetCount(count: *mut c_int) -> Status;
    pub fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> Status;
    pub fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> Status;
    pub fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) -> Status;
    pub fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) -> Status;
    pub fn cuEventCreate(phEvent: *mut CUevent, Flags: c_uint) -> Status;
    pub fn cuEventDestroy_v2(hEvent: CUevent) -> Status;
    pub fn cuEventElapsedTime(pMilliseconds: *mut f32, hStart: CUevent, hEnd: CUevent) -> Status;
    pub fn cuEventQuery(hEvent: CUevent) -> Status;
    pub fn cuEventRecord(hEvent: CUevent, hStream: CUstream) -> Status;
    pub fn cuEventSynchronize(hEvent: CUevent) -> Status;
    pub fn cuFuncGetAttribute(
        pi: *mut c_int,
        attrib: CUfunction_attribute,
        hfunc: CUfunction,
    ) -> Status;
    pub fn cuFuncSetAttribute(
        hfunc: CUfunction,
        attrib: CUfunction_attribute,
        value: c_int,
    ) -> Status;
    pub fn cuGetErrorString(error: u32, pStr: *mut *const c_char) -> Status;
    pub fn cuGetErrorName(error: u32, pStr: *mut *const c_char) -> Status;
    /// The v1 entry point (CUDA 11.3's four parameters), which every later
    /// driver keeps exporting under this name.
    pub fn cuGetProcAddress(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        cudaVersion: c_int,
        flags: c_ulonglong,
    ) -> Status;
    pub fn cuGraphDebugDotPrint(hGraph: CUgraph, path: *const c_char, flags: c_uint) -> Status;
    pub fn cuGraphDestroy(hGraph: CUgraph) -> Status;
    pub fn cuGraphExecDestroy(hGraphExec: CUgraphExec) -> Status;
    pub fn cuGraphInstantiateWithFlags(
        phGraphExec: *mut CUgraphExec,
        hGraph: CUgraph,
        flags: c_ulonglong,
    ) -> Status;
    pub fn cuGraphLaunch(hGraphExec: CUgraphExec, hStream: CUstream) -> Status;
    pub fn cuGraphExecKernelNodeSetParams(
        hGraphExec: CUgraphExec,
        hNode: CUgraphNode,
        nodeParams: *const CUDA_KERNEL_NODE_PARAMS,
    ) -> Status;
    pub fn cuGraphNodeGetType(hNode: CUgraphNode, type_: *mut c_uint) -> Status;
    pub fn cuGraphMemcpyNodeGetParams(hNode: CUgraphNode, nodeParams: *mut Memcpy3d) -> Status;
    pub fn cuGraphExecMemcpyNodeSetParams(
        hGraphExec: CUgraphExec,
        hNode: CUgraphNode,
        copyParams: *const Memcpy3d,
        ctx: CUcontext,
    ) -> Status;
    pub fn cuGraphMemsetNodeGetParams(
        hNode: CUgraphNode,
        nodeParams: *mut CUDA_MEMSET_NODE_PARAMS,
    ) -> Status;
    pub fn cuGraphExecMemsetNodeSetParams(
        hGraphExec: CUgraphExec,
        hNode: CUgraphNode,
        memsetParams: *const CUDA_MEMSET_NODE_PARAMS,
        ctx: CUcontext,
    ) -> Status;
    pub fn cuInit(Flags: c_uint) -> Status;
    pub fn cuLaunchKernel(
        f: CUfunction,
        gridDimX: c_uint,
        gridDimY: c_uint,
        gridDimZ: c_uint,
        blockDimX: c_uint,
        blockDimY: c_uint,
        blockDimZ: c_uint,
        sharedMemBytes: c_uint,
        hStream: CUstream,
        kernelParams: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> Status;
    pub fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, hStream: CUstream) -> Status;
    pub fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize) -> Status;
    pub fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize) -> Status;
    pub fn cuMemFreeAsync(dptr: CUdeviceptr, hStream: CUstream) -> Status;
    pub fn cuMemFreeHost(p: *mut c_void) -> Status;
    pub fn cuMemFree_v2(dptr: CUdeviceptr) -> Status;
    pub fn cuMemHostAlloc(pp: *mut *mut c_void, bytesize: usize, Flags: c_uint) -> Status;
    pub fn cuMemHostGetDevicePointer_v2(
        pdptr: *mut CUdeviceptr,
        p: *mut c_void,
        Flags: c_uint,
    ) -> Status;
    pub fn cuMemHostRegister_v2(p: *mut c_void, bytesize: usize, Flags: c_uint) -> Status;
    pub fn cuMemHostUnregister(p: *mut c_void) -> Status;
    pub fn cuMemcpyAsync(
        dst: CUdeviceptr,
        src: CUdeviceptr,
        ByteCount: usize,
        hStream: CUstream,
    ) -> Status;
    pub fn cuDeviceCanAccessPeer(
        canAccessPeer: *mut c_int,
        dev: CUdevice,
        peerDev: CUdevice,
    ) -> Status;
    pub fn cuCtxEnablePeerAccess(peerContext: CUcontext, Flags: c_uint) -> Status;
    pub fn cuMemcpyPeer(
        dstDevice: CUdeviceptr,
        dstContext: CUcontext,
        srcDevice: CUdeviceptr,
        srcContext: CUcontext,
        ByteCount: usize,
    ) -> Status;
    pub fn cuMemcpyDtoDAsync_v2(
        dstDevice: CUdeviceptr,
        srcDevice: CUdeviceptr,
        ByteCount: usize,
        hStream: CUstream,
    ) -> Status;
    pub fn cuMemcpyDtoD_v2(
        dstDevice: CUdeviceptr,
        srcDevice: CUdeviceptr,
        ByteCount: usize,
    ) -> Status;
    pub fn cuMemcpyDtoHAsync_v2(
        dstHost: *mut c_void,
        srcDevice: CUdeviceptr,
        ByteCount: usize,
        hStream: CUstream,
    ) -> Status;
    pub fn cuMemcpyDtoH_v2(
        dstHost: *mut c_void,
        srcDevice: CUdeviceptr,
        ByteCount: usize,
    ) -> Status;
    pub fn cuMemcpyHtoDAsync_v2(
        dstDevice: CUdeviceptr,
        srcHost: *const c_void,
        ByteCount: usize,
        hStream: CUstream,
    ) -> Status;
    pub fn cuMemcpyHtoD_v2(
        dstDevice: CUdeviceptr,
        srcHost: *const c_void,
        ByteCount: usize,
    ) -> Status;
    pub fn cuMemsetD16Async(
        dstDevice: CUdeviceptr,
        us: c_ushort,
        N: usize,
        hStream: CUstream,
    ) -> Status;
    pub fn cuMemsetD32Async(
        dstDevice: CUdeviceptr,
        ui: c_uint,
        N: usize,
        hStream: CUstream,
    ) -> Status;
    pub fn cuMemsetD8Async(
        dstDevice: CUdeviceptr,
        uc: c_uchar,
        N: usize,
        hStream: CUstream,
    ) -> Status;
    pub fn cuMemsetD8_v2(dstDevice: CUdeviceptr, uc: c_uchar, N: usize) -> Status;
    pub fn cuModuleGetFunction(
        hfunc: *mut CUfunction,
        hmod: CUmodule,
        name: *const c_char,
    ) -> Status;
    pub fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void) -> Status;
    pub fn cuModuleUnload(hmod: CUmodule) -> Status;
    pub fn cuStreamBeginCapture_v2(hStream: CUstream, mode: CUstreamCaptureMode) -> Status;
    pub fn cuStreamCreateWithPriority(
        phStream: *mut CUstream,
        flags: c_uint,
        priority: c_int,
    ) -> Status;
    pub fn cuStreamDestroy_v2(hStream: CUstream) -> Status;
    pub fn cuStreamEndCapture(hStream: CUstream, phGraph: *mut CUgraph) -> Status;
    pub fn cuStreamGetCaptureInfo_v2(
        hStream: CUstream,
        captureStatus_out: *mut c_uint,
        id_out: *mut u64,
        graph_out: *mut CUgraph,
        dependencies_out: *mut *const CUgraphNode,
        numDependencies_out: *mut usize,
    ) -> Status;
    pub fn cuStreamGetPriority(hStream: CUstream, priority: *mut c_int) -> Status;
    pub fn cuStreamQuery(hStream: CUstream) -> Status;
    pub fn cuStreamSynchronize(hStream: CUstream) -> Status;
    pub fn cuStreamWaitEvent(hStream: CUstream, hEvent: CUevent, Flags: c_uint) -> Status;
}
