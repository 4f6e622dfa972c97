//! A launch as the engine keeps it: the configuration checked against the
//! GPU once, and the argument values laid out once, so that a run makes
//! the one driver call.

use super::address::Addr;
use crate::device_model::DeviceModel;
use crate::driver::{self, DriverError};
use crate::error::Fault;
use crate::kernel::{Dim3, Kernel, LaunchConfig};
use cust::sys::{
    CUDA_KERNEL_NODE_PARAMS, CUfunction_attribute, CUgraphExec, CUgraphNode, CUstream,
};
use std::ffi::c_void;
use std::mem::MaybeUninit;

/// One argument's storage unit: kernel arguments are aligned to at most 16.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(crate) struct Chunk(MaybeUninit<[u8; 16]>);

/// The largest alignment a kernel value argument may have.
pub(crate) const MAX_ALIGN: usize = align_of::<Chunk>();

/// A resolved launch.
pub(crate) struct LaunchStep {
    pub kernel: u16,
    pub config: LaunchConfig,
    /// A grid with a zero dimension: no blocks, so no driver call (empty
    /// input is valid input).
    pub empty: bool,
    /// Every argument's bytes, each from a chunk boundary.
    storage: Vec<Chunk>,
    /// The first chunk of each argument.
    starts: Vec<usize>,
    /// Pointer arguments whose address is known only during a run (caller
    /// slices, stream-ordered buffers): (argument, address).
    patches: Vec<(usize, Addr)>,
    /// Whether every byte of `storage` is initialized: no argument's type
    /// has padding (chunks start zeroed).
    initialized: bool,
}

/// The arguments of a launch, in order, as they are being laid out.
pub(crate) struct Arguments {
    storage: Vec<Chunk>,
    starts: Vec<usize>,
    patches: Vec<(usize, Addr)>,
    initialized: bool,
    /// The launch whose allocations these are, laid out again.
    home: Option<Box<LaunchStep>>,
}

impl Default for Arguments {
    fn default() -> Self {
        Arguments {
            storage: Vec::new(),
            starts: Vec::new(),
            patches: Vec::new(),
            initialized: true,
            home: None,
        }
    }
}

impl Arguments {
    /// Arguments laid out in the allocations of `old`, a launch resolved
    /// before, which `finish` fills in again.
    pub fn reusing(mut old: Box<LaunchStep>) -> Arguments {
        let mut arguments = Arguments {
            storage: std::mem::take(&mut old.storage),
            starts: std::mem::take(&mut old.starts),
            patches: std::mem::take(&mut old.patches),
            ..Arguments::default()
        };
        arguments.storage.clear();
        arguments.starts.clear();
        arguments.patches.clear();
        arguments.home = Some(old);
        arguments
    }

    /// Appends a value argument of `bytes`, every one initialized.
    pub fn value(&mut self, bytes: &[u8]) {
        // SAFETY: `u8` and `MaybeUninit<u8>` have one layout; initialized
        // bytes are valid `MaybeUninit<u8>`s.
        let bytes = unsafe { &*(std::ptr::from_ref(bytes) as *const [MaybeUninit<u8>]) };
        self.bytes(bytes);
    }

    /// Appends a value argument of a type that may have padding, whose
    /// bytes may be uninitialized.
    pub fn value_of_any_type(&mut self, bytes: &[MaybeUninit<u8>], initialized: bool) {
        self.initialized &= initialized;
        self.bytes(bytes);
    }

    fn bytes(&mut self, bytes: &[MaybeUninit<u8>]) {
        self.starts.push(self.storage.len());
        push_chunks(&mut self.storage, bytes);
    }

    /// Appends a pointer argument: a device address, or one filled in at
    /// each launch.
    pub fn pointer(&mut self, address: Result<u64, Addr>) {
        let index = self.starts.len();
        let value = match address {
            Ok(address) => address,
            Err(later) => {
                self.patches.push((index, later));
                0
            }
        };
        self.value(&value.to_ne_bytes());
    }

    pub fn finish(self, kernel: u16, config: LaunchConfig) -> Box<LaunchStep> {
        let empty = [config.grid.x, config.grid.y, config.grid.z].contains(&0);
        let launch = LaunchStep {
            kernel,
            config,
            empty,
            storage: self.storage,
            starts: self.starts,
            patches: self.patches,
            initialized: self.initialized,
        };
        match self.home {
            Some(mut home) => {
                *home = launch;
                home
            }
            None => Box::new(launch),
        }
    }
}

/// Appends a value argument's bytes to `storage` as a launch keeps them:
/// from a chunk boundary, in whole chunks (at least one), the rest zeroed.
pub(crate) fn push_chunks(storage: &mut Vec<Chunk>, bytes: &[MaybeUninit<u8>]) {
    let start = storage.len();
    let chunks = bytes.len().div_ceil(size_of::<Chunk>()).max(1);
    storage.resize(start + chunks, Chunk(MaybeUninit::zeroed()));
    // SAFETY: `chunks` chunks from `start` hold at least `bytes.len()`
    // bytes; `MaybeUninit` bytes may be copied whatever they hold.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            storage.as_mut_ptr().add(start).cast::<MaybeUninit<u8>>(),
            bytes.len(),
        );
    }
}

impl LaunchStep {
    /// Queues the launch on `stream`, with the addresses `resolve` gives
    /// for the arguments known only during a run.
    ///
    /// # Safety
    /// The arguments match the kernel's parameters, and the memory they
    /// reach stays allocated, and the host off it, until `stream` has
    /// finished the kernel.
    pub unsafe fn launch(
        &mut self,
        kernel: &Kernel,
        stream: CUstream,
        resolve: impl Fn(Addr) -> Result<u64, Fault>,
    ) -> Result<(), Fault> {
        if self.empty {
            return Ok(());
        }
        let config = self.config;
        // SAFETY: the pointers point at the arguments' bytes, which live
        // until the driver has copied them during this call; the rest is
        // the caller's promise.
        self.with_arguments(resolve, |pointers| unsafe {
            kernel.launch_raw(stream, config, pointers)
        })
    }

    /// Writes value argument `position` again, as `chunks` (laid out by
    /// [`push_chunks`], of a type with padding unless `initialized`):
    /// `Some(true)` where its bytes changed, `Some(false)` where they are
    /// the bytes it held; `None` if the launch has no such argument, or it
    /// takes another number of chunks: the launch must be resolved again.
    pub fn set_value(
        &mut self,
        position: usize,
        chunks: &[Chunk],
        initialized: bool,
    ) -> Option<bool> {
        let &start = self.starts.get(position)?;
        let end = (self.starts.get(position + 1).copied()).unwrap_or(self.storage.len());
        let old = self.storage.get_mut(start..end)?;
        if old.len() != chunks.len() {
            return None;
        }
        // Compared only where every byte of both is initialized (padding
        // may hold anything, and is never known to be the same).
        if initialized && self.initialized {
            // SAFETY: every byte of `storage` is initialized
            // (`self.initialized`, as for `as_patched_node`), and so is
            // every byte of `chunks`: laid out from zeroed chunks with
            // initialized bytes (`initialized`).
            let same = (old.iter().zip(chunks))
                .all(|(old, new)| unsafe { old.0.assume_init_ref() == new.0.assume_init_ref() });
            if same {
                return Some(false);
            }
        }
        match (old, chunks) {
            // A value of 16 bytes or less (most are scalars): one chunk,
            // moved as a value, not through a `memcpy` call (a run writes
            // its values into every launch that reads them).
            ([old], [new]) => *old = *new,
            (old, chunks) => old.copy_from_slice(chunks),
        }
        // Only ever less: a parameter's type, and so whether its values
        // have padding, is fixed, so this stays as the launch was laid out.
        self.initialized &= initialized;
        Some(true)
    }

    /// Sets the launch as the kernel node `node` of `exec` will make it at
    /// its next replays, with the addresses known only during a run as the
    /// last [`as_node`](Self::as_node) filled them in.
    ///
    /// # Safety
    /// As for [`launch`](Self::launch), for every later replay of `exec`;
    /// `node` is a kernel node of `kernel`, of the graph `exec` was made
    /// from. The launch is not empty, and the last `as_node` filled in the
    /// addresses this node's replays use (its graph's allocations).
    pub unsafe fn set_node(
        &mut self,
        kernel: &Kernel,
        exec: CUgraphExec,
        node: CUgraphNode,
    ) -> Result<(), Fault> {
        let LaunchConfig {
            grid,
            block,
            shared_bytes,
        } = self.config;
        self.with_patched_arguments(|pointers| {
            let params = CUDA_KERNEL_NODE_PARAMS {
                func: kernel.raw(),
                gridDimX: grid.x,
                gridDimY: grid.y,
                gridDimZ: grid.z,
                blockDimX: block.x,
                blockDimY: block.y,
                blockDimZ: block.z,
                sharedMemBytes: shared_bytes,
                kernelParams: pointers,
                extra: std::ptr::null_mut(),
            };
            // SAFETY: the pointers point at the arguments' bytes, which
            // live until the driver has copied them during this call; the
            // rest is the caller's promise.
            unsafe { driver::graph_exec_kernel_node_set_params(exec, node, &params) }
        })
    }

    /// Calls `use_them` with a pointer to each argument's bytes, once the
    /// addresses known only during a run are filled in by `resolve`.
    fn with_arguments(
        &mut self,
        resolve: impl Fn(Addr) -> Result<u64, Fault>,
        use_them: impl FnOnce(*mut *mut c_void) -> Result<(), DriverError>,
    ) -> Result<(), Fault> {
        self.patch(resolve)?;
        self.with_patched_arguments(use_them)
    }

    /// [`with_arguments`](Self::with_arguments) with the addresses as the
    /// last patch left them.
    fn with_patched_arguments(
        &mut self,
        use_them: impl FnOnce(*mut *mut c_void) -> Result<(), DriverError>,
    ) -> Result<(), Fault> {
        let base = self.storage.as_mut_ptr();
        // On the stack for the kernels most take: a launch is the one
        // driver call of its step.
        let mut inline = [std::ptr::null_mut::<c_void>(); 16];
        let mut spilled = Vec::new();
        let pointers = match inline.get_mut(..self.starts.len()) {
            Some(inline) => inline,
            None => {
                spilled.resize(self.starts.len(), std::ptr::null_mut());
                &mut spilled[..]
            }
        };
        for (pointer, &start) in pointers.iter_mut().zip(&self.starts) {
            // SAFETY: every start is a chunk of `storage`.
            *pointer = unsafe { base.add(start) }.cast::<c_void>();
        }
        use_them(pointers.as_mut_ptr())?;
        Ok(())
    }

    /// What the launch is, as a graph's kernel node holds it, with the
    /// addresses known only during a run filled in by `resolve`: its
    /// configuration and its arguments' bytes; `None` where an argument's
    /// type may have padding, whose bytes cannot be compared.
    pub fn as_node(
        &mut self,
        resolve: impl Fn(Addr) -> Result<u64, Fault>,
    ) -> Result<Option<(LaunchConfig, &[u8])>, Fault> {
        self.patch(resolve)?;
        Ok(self.as_patched_node())
    }

    /// [`as_node`](Self::as_node) as the last patch left the addresses.
    pub fn as_patched_node(&self) -> Option<(LaunchConfig, &[u8])> {
        if !self.initialized {
            return None;
        }
        // SAFETY: every byte of `storage` is initialized: its chunks start
        // zeroed, and every argument written over them is of initialized
        // bytes (`initialized`).
        let bytes = unsafe {
            std::slice::from_raw_parts(
                self.storage.as_ptr().cast::<u8>(),
                size_of_val::<[Chunk]>(&self.storage),
            )
        };
        Some((self.config, bytes))
    }

    /// Fills in the addresses known only during a run.
    fn patch(&mut self, resolve: impl Fn(Addr) -> Result<u64, Fault>) -> Result<(), Fault> {
        for &(argument, address) in &*self.patches {
            let chunk = &mut self.storage[self.starts[argument]];
            let bytes = resolve(address)?.to_ne_bytes().map(MaybeUninit::new);
            // SAFETY: a chunk holds 16 bytes; the address takes 8.
            unsafe {
                chunk
                    .0
                    .as_mut_ptr()
                    .cast::<[MaybeUninit<u8>; 8]>()
                    .write(bytes)
            };
        }
        Ok(())
    }
}

/// The limits a launch must keep on `device`, and, once `kernel` is loaded
/// there, the kernel's own (which its compiled code sets: how many threads
/// its registers allow, how much shared memory its static arrays take).
/// `new` checks against the GPU itself and the loaded kernel, and lets
/// the kernel have the dynamic shared memory it asks for above the default;
/// `check`, with a device model and no kernel, makes every check of the
/// device alone, with the same errors.
pub(crate) fn check_limits(
    device: &DeviceModel,
    kernel: Option<&Kernel>,
    config: &LaunchConfig,
) -> Result<(), Fault> {
    use CUfunction_attribute::*;
    let Dim3 { x, y, z } = config.block;
    if [x, y, z].contains(&0) {
        return Err(Fault::Launch(format!(
            "a block of {x} x {y} x {z} threads has none"
        )));
    }
    // Written out only for an error: a launch is checked at every run.
    let gpu = || device.described();
    let axes = ["x", "y", "z"];
    for ((value, limit), axis) in [x, y, z].into_iter().zip(device.max_block_dims()).zip(axes) {
        if value > limit {
            return Err(Fault::Launch(format!(
                "the block's {axis} dimension is {value}, above {gpu}'s {limit}",
                gpu = gpu()
            )));
        }
    }
    let grid = config.grid;
    for ((value, limit), axis) in [grid.x, grid.y, grid.z]
        .into_iter()
        .zip(device.max_grid_dims())
        .zip(axes)
    {
        if value > limit {
            return Err(Fault::Launch(format!(
                "the grid's {axis} dimension is {value}, above {gpu}'s {limit}",
                gpu = gpu()
            )));
        }
    }
    let threads = u64::from(x) * u64::from(y) * u64::from(z);
    let most = u64::from(device.max_threads_per_block());
    if threads > most {
        return Err(Fault::Launch(format!(
            "a block of {threads} threads, above the {most} a block can have on {gpu}",
            gpu = gpu()
        )));
    }
    // Static and dynamic shared memory together fit in what a block can
    // opt in to, whatever the kernel.
    let shared = config.shared_bytes;
    let most = device.max_shared_memory_per_block();
    if shared > most {
        return Err(Fault::Launch(format!(
            "{shared} bytes of dynamic shared memory, above the {most} a block can have on {gpu}",
            gpu = gpu()
        )));
    }
    let Some(kernel) = kernel else {
        return Ok(());
    };
    let most = u64::from(kernel.attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?);
    if threads > most {
        return Err(Fault::Launch(format!(
            "a block of {threads} threads, above the {most} this kernel can run on {gpu}",
            gpu = gpu()
        )));
    }
    let allowed = kernel.attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
    if shared > allowed {
        // Above the default, a kernel must opt in; do so where the GPU can.
        let static_bytes = kernel.attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let most = device
            .max_shared_memory_per_block()
            .saturating_sub(static_bytes);
        if shared > most {
            return Err(Fault::Launch(format!(
                "{shared} bytes of dynamic shared memory, above the {most} this kernel can have on {gpu}",
                gpu = gpu()
            )));
        }
        kernel.set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_start_on_chunks_and_keep_their_bytes() {
        let mut arguments = Arguments::default();
        arguments.value(&7u32.to_ne_bytes());
        arguments.pointer(Ok(0xdead_beef));
        arguments.value(&[1u8; 24]);
        let launch = arguments.finish(0, LaunchConfig::new(1, 1, 0));
        assert_eq!(&*launch.starts, &[0, 1, 2]);
        assert_eq!(launch.storage.len(), 4, "24 bytes take two chunks");
        // SAFETY: chunk 1 holds the pointer's 8 bytes.
        let pointer = unsafe { launch.storage[1].0.as_ptr().cast::<u64>().read() };
        assert_eq!(pointer, 0xdead_beef);
    }

    /// `bytes` laid out as a launch keeps a value.
    fn chunks(bytes: &[u8]) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        // SAFETY: initialized bytes are valid `MaybeUninit<u8>`s.
        let bytes = unsafe { &*(std::ptr::from_ref(bytes) as *const [MaybeUninit<u8>]) };
        push_chunks(&mut chunks, bytes);
        chunks
    }

    /// The bytes of `launch`'s argument `position`'s first chunk.
    fn first_chunk(launch: &LaunchStep, position: usize) -> [u8; 16] {
        // SAFETY: every byte of these launches' storage is initialized.
        unsafe { launch.storage[launch.starts[position]].0.assume_init() }
    }

    #[test]
    fn a_value_written_again_says_whether_it_changed() {
        let mut arguments = Arguments::default();
        arguments.value(&7u32.to_ne_bytes());
        arguments.value(&[1u8; 24]);
        let mut launch = arguments.finish(0, LaunchConfig::new(1, 1, 0));
        // The same bytes: nothing changed.
        assert_eq!(
            launch.set_value(0, &chunks(&7u32.to_ne_bytes()), true),
            Some(false)
        );
        assert_eq!(launch.set_value(1, &chunks(&[1u8; 24]), true), Some(false));
        // Other bytes: written, the rest of the chunk still zero.
        assert_eq!(
            launch.set_value(0, &chunks(&9u32.to_ne_bytes()), true),
            Some(true)
        );
        let mut nine = [0u8; 16];
        nine[..4].copy_from_slice(&9u32.to_ne_bytes());
        assert_eq!(first_chunk(&launch, 0), nine);
        assert_eq!(launch.set_value(1, &chunks(&[2u8; 24]), true), Some(true));
        assert_eq!(first_chunk(&launch, 1), [2u8; 16]);
        // A value of a type with padding is never known to be the same:
        // written, and from then on none of the launch's is compared.
        assert_eq!(
            launch.set_value(0, &chunks(&9u32.to_ne_bytes()), false),
            Some(true)
        );
        assert_eq!(launch.set_value(1, &chunks(&[2u8; 24]), true), Some(true));
        // Another number of chunks, or no such argument: resolved again.
        assert_eq!(launch.set_value(0, &chunks(&[0u8; 24]), true), None);
        assert_eq!(launch.set_value(2, &chunks(&[0u8; 4]), true), None);
    }

    #[test]
    fn a_grid_without_blocks_launches_nothing() {
        let launch = Arguments::default().finish(0, LaunchConfig::new((4, 0), 256, 0));
        assert!(launch.empty);
        let launch = Arguments::default().finish(0, LaunchConfig::new(4, 256, 0));
        assert!(!launch.empty);
    }

    /// What `check_limits` says of `config` on an sm_90 model.
    fn on_hopper(config: LaunchConfig) -> Result<(), String> {
        let model = DeviceModel::named("sm_90").unwrap();
        check_limits(&model, None, &config).map_err(|fault| fault.to_string())
    }

    #[test]
    fn a_model_holds_launches_to_its_limits() {
        assert_eq!(
            on_hopper(LaunchConfig::new(i32::MAX as u32, 1024u32, 0)),
            Ok(())
        );
        assert_eq!(
            on_hopper(LaunchConfig::new(1u32 << 31, 256u32, 0)),
            Err("the grid's x dimension is 2147483648, above an sm_90 GPU's 2147483647".into())
        );
        assert_eq!(
            on_hopper(LaunchConfig::new((1u32, 65536u32), 256u32, 0)),
            Err("the grid's y dimension is 65536, above an sm_90 GPU's 65535".into())
        );
        assert_eq!(
            on_hopper(LaunchConfig::new(1u32, (1u32, 1u32, 65u32), 0)),
            Err("the block's z dimension is 65, above an sm_90 GPU's 64".into())
        );
        assert_eq!(
            on_hopper(LaunchConfig::new(1u32, (64u32, 32u32), 0)),
            Err("a block of 2048 threads, above the 1024 a block can have on an sm_90 GPU".into())
        );
        assert_eq!(
            on_hopper(LaunchConfig::new(1u32, (256u32, 0u32), 0)),
            Err("a block of 256 x 0 x 1 threads has none".into())
        );
        // Dynamic shared memory above the default 48 KiB is the kernel's to
        // opt in to; above what a block can opt in to, no kernel can have.
        assert_eq!(on_hopper(LaunchConfig::new(1u32, 256u32, 232_448)), Ok(()));
        assert_eq!(
            on_hopper(LaunchConfig::new(1u32, 256u32, 232_449)),
            Err("232449 bytes of dynamic shared memory, above the 232448 a block can have on an sm_90 GPU".into())
        );
    }
}
