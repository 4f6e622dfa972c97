//! # The `memplan!` language
//!
//! A plan declares the memory, kernels, streams and events of a piece of GPU
//! work, then the operations, in the order the host issues them. The macro
//! checks the plan while your program compiles and turns it into a type
//! that owns every resource and replays the operations as driver calls.
//!
//! ```
//! use memplan::prelude::*;
//!
//! memplan! {
//!     /// Adds one to every element of `data`, on the GPU.
//!     pub plan AddOne(n: usize) {
//!         kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
//!
//!         host   data: [f32; n] pinned;
//!         device on_gpu: [f32; n];
//!         stream work;
//!
//!         on work {
//!             copy data -> on_gpu;
//!             launch process_data<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
//!             copy on_gpu -> data;
//!         }
//!     }
//! }
//!
//! fn add_one(ctx: &Context, xs: &mut [f32]) -> memplan::Result<()> {
//!     let mut plan = AddOne::new(ctx, xs.len())?; // allocates everything, once
//!     plan.host_mut().data.copy_from_slice(xs);
//!     plan.run()?;                                // queues, waits, reports
//!     xs.copy_from_slice(plan.host().data);
//!     Ok(())
//! }
//! ```
//!
//! One `memplan!` may hold several plans. The sections below take the
//! constructs one at a time; [What a plan becomes](#what-a-plan-becomes)
//! describes the generated type, and [The checks](#the-checks) what is
//! refused.
//!
//! ## Parameters
//!
//! `plan Name(params)` takes three kinds of parameter:
//! - `n: usize`: a size, fixed when the plan is made (`Name::new(&ctx, n)`).
//!   Lengths and ranges are written with sizes, integers, `usize`
//!   constants, `+ - * / %`, `min(a, b)`, parentheses, `as usize` and
//!   calls, so that the macro can compare them (see [Sizes](#sizes)).
//! - `scale: f32` (any other `Copy` type): a value, also fixed at `new`,
//!   usable in launch arguments, fill values and host steps.
//! - `run len: usize`, `run a: f32`: given to each run rather than to
//!   `new` (`plan.run(len, a)`), so that a new value per batch, or a
//!   shorter last batch, needs no new plan. A `run` size is a size like
//!   any other in ranges, launch dimensions and loop counts, and every
//!   check holds for every value of it; buffers are allocated by `new`,
//!   so they are sized by a capacity (`x: [f32; cap]`) and runs use a
//!   range of it (`x[..len]`), which each run checks against the buffer.
//!   `run` values go into launch arguments and fill values, computed at
//!   each run. Ops that read `run` parameters are resolved again at each
//!   run (a loop that does, unrolled again), unless the run gives the
//!   sizes of the last: then its values are written into the ops resolved
//!   for those sizes, checked as resolving checks them, and a run that
//!   gives what the last gave changes nothing. Such a plan replays as CUDA
//!   graphs with `set_replay(Replay::Graph)` (below, under the plan's
//!   methods): each run's graph is changed in place to its sizes and
//!   values; `graph(len, v)` captures one run's, replayed as it is.
//! - `run len: usize <= cap` (any size parameter, `new`'s too, bounded by
//!   any size of the plan): every value given is at most the bound, and
//!   the checks take that as true. `new` checks the bounds it can compute,
//!   each `run`, `enqueue` and `submit` the rest, before anything reads
//!   the sizes, with an error naming the parameter (``len` is 5000, above
//!   its bound `cap`, 4096``). A loop whose last chunk ends at a run
//!   length, `c * m..min(c * m + m, len)`, in buffers of a capacity, needs
//!   it: without it nothing says the chunks stay inside `cap` elements.
//! - `xs: &[f32; n]` or `out: &mut [f32; n]`: the caller's memory, passed
//!   to each `run(xs, out)` and borrowed for the run. With a length, `run`
//!   checks the slice has it. `registered` page-locks the slice for the run
//!   (`cuMemHostRegister`), which asynchronous copies need.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     plan Double(n: usize, input: &[f32; n] registered, output: &mut [f32; n] registered) {
//!         kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
//!         device from: [f32; n], to: [f32; n];
//!         stream work;
//!         on work {
//!             copy input -> from;
//!             launch scale_by_two<<<blocks(n, 256), 256>>>(from, to, n as i32);
//!             copy to -> output;
//!         }
//!     }
//! }
//! # fn use_it(ctx: &Context, input: &[f32], output: &mut [f32]) -> memplan::Result<()> {
//! let mut plan = Double::new(ctx, input.len())?;
//! plan.run(input, output)?;
//! # Ok(()) }
//! ```
//!
//! ## Kernels
//!
//! `kernel name(params) from MODULE;` declares a kernel of a compiled
//! module (an [`Image`](crate::Image), such as those of `memplan_kernels`)
//! with its C++ signature: `&[T; e]` for a pointer whose first `e`
//! elements the kernel reads, `&mut [T; e]` for one it reads and writes,
//! `&out [T; e]` for one whose first `e` elements it all writes, and plain
//! data for values: types that implement [`KernelValue`](crate::KernelValue)
//! (integers, floats, `bool`, arrays of them, CUDA's vector types as
//! [`Float4`](crate::Float4) and its kin, and `#[repr(C)]` structs their
//! author vouches for). Memory reaches a kernel only as a buffer argument,
//! which the checks track; a device pointer is not a `KernelValue`. The
//! macro holds every launch to the declaration, and the declaration is
//! held to what the kernel's source states, described under [Kernel
//! contracts](#kernel-contracts):
//!
//! - **Checked while the program compiles**, for modules `memplan-build`
//!   made: the name exists; the parameter count; pointer or value; the
//!   element type (`&[f32; n]` is `float *`, `const` or not); value widths
//!   and signedness (`i32` is `int`, `u32` `unsigned int`, `u64`
//!   `unsigned long long` or `size_t`, `f32` `float`), read from the Rust
//!   type itself, so an alias is the type it aliases; classes by name and
//!   layout; each pointer's access and extent, as its contract states
//!   them. A mismatch is an error at the declaration that shows the C++
//!   and the declaration that would match it. `extern "C"` and C++ kernels
//!   alike; a C++ name that is not a Rust identifier, such as a template's
//!   instance, is given with `as`: `kernel scale(...) from M as
//!   "scaled<float>";`.
//! - **`unsafe kernel`** declares a kernel whose facts no build step read:
//!   a module of unknown origin (bytes from elsewhere, PTX from another
//!   tool: [`Image::from_ptx`](crate::Image::from_ptx)), or a kernel whose
//!   source states no contract. The declaration is then your promise,
//!   written with `unsafe`, which `#![forbid(unsafe_code)]` refuses: its
//!   types, and that the kernel touches only the declared extent of each
//!   pointer (all of the argument where none is declared) in the declared
//!   way.
//! - **At `new`**, whatever the origin, each declaration is compared with
//!   the driver's account of the compiled kernel's parameters
//!   (`cuFuncGetParamInfo`: count, offsets, sizes; CUDA 12.4 drivers and
//!   newer), and a mismatch is an error naming the declaration.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     plan Add(n: usize) {
//!         kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
//!         device a: [f32; n], b: [f32; n], c: [f32; n];
//!         fill a with 1.0;
//!         fill b with 2.0;
//!         launch vadd<<<blocks(n, 256), 256>>>(a, b, c, n as i32);
//!     }
//! }
//! ```
//!
//! ### Kernel contracts
//!
//! A plan is sound only if its kernels do what their declarations say:
//! touch no element past a pointer's extent, write nothing they are said
//! only to read, write all of what they are said to write. Those are facts
//! about the kernel's body, so they are stated where the body is written,
//! in the `.cu`, next to each pointer parameter, with the macros of
//! `memplan.cuh` (which `memplan-build` puts on nvcc's include path):
//!
//! ```text
//! #include <memplan.cuh>
//!
//! extern "C" __global__ void vadd(MEMPLAN_READS(n) const float *a,
//!                                 MEMPLAN_READS(n) const float *b,
//!                                 MEMPLAN_WRITES(n) float *c, int n);
//! ```
//!
//! | in the `.cu` | the kernel, in any launch | declared |
//! | --- | --- | --- |
//! | `MEMPLAN_READS(e)` | reads elements `[0, e)`, writes none | `&[T; e]` |
//! | `MEMPLAN_WRITES(e)` | writes every element of `[0, e)` if its grid has a block, reads none before writing it | `&out [T; e]` |
//! | `MEMPLAN_UPDATES(e)` | reads and writes elements of `[0, e)` | `&mut [T; e]` |
//! | `MEMPLAN_ATOMIC(e)` | reads and writes elements of `[0, e)` with atomic operations only | `&atomic [T; e]` (or `&mut`) |
//!
//! `&atomic` updates do not conflict with each other: two kernels on two
//! streams may `atomicAdd` into one histogram or sum without an order
//! between them. They conflict with every other access, as `&mut` does, so
//! the fill before them and the read after them need their orders. Only a
//! source that says `MEMPLAN_ATOMIC` (or an `unsafe kernel`, your promise)
//! may be declared `&atomic`; `&mut` of one says less, and is accepted.
//!
//! An extent `e` is written with integers, the kernel's integer
//! parameters, `+ - * / %` and parentheses; the values it names are never
//! negative at a launch (sizes are not, and `new` refuses a negative value
//! it computes an extent from).
//! Outside `memplan-build` the macros expand to nothing, so the source
//! compiles and runs for any other use exactly as without them; and
//! `memplan-build` reads them from the declarations nvcc's front end
//! prints, tied to each kernel through the host definition nvcc writes
//! for it. A kernel takes its declarations' contracts only where its name
//! is its own in its file: one kernel (declared any number of times
//! alike) or one kernel template and its instances, which nvcc itself
//! confirms: after the file, the name's address must be one function, of
//! the kernel's own parameter types for every GPU architecture. Where
//! the name is shared (another namespace's function, an overload, a
//! specialization, a `__device__` function of the name) it takes none,
//! and the build warns; declare it `unsafe kernel`, or rename. A contract
//! that reads differently in the fatbin's compilation for some GPU
//! architecture (an extent's macro that depends on `__CUDA_ARCH__`) stops
//! the build; an `extern "C"` kernel whose parameter types differ between
//! the architectures (a typedef that depends on `__CUDA_ARCH__`) has no
//! parameters memplan can check, so only an `unsafe kernel` declares it.
//!
//! What is trusted, where it is stated, and what is checked:
//!
//! | fact | stated by | checked |
//! | --- | --- | --- |
//! | which kernels a module has, each parameter's type | nvcc (the names it mangles for the GPU), read by `memplan-build` | every declaration agrees, while the program compiles; every GPU architecture of the build compiles the same types, by `memplan-build` |
//! | a class's layout (`float4`, `struct Window`) | nvcc, which `memplan-build` asks for each class's size and alignment | the Rust type's [`KernelValue`](crate::KernelValue) impl names the class (`CPP_NAME`) and has its size and alignment, while the program compiles; that the fields agree and hold no pointer is the impl's `unsafe` promise |
//! | what the body does with each pointer, and how far it reaches | the kernel's author, in the `.cu`, with `memplan.cuh` | by `memplan-build`: a contract sits on a pointer, what is written is not `const`, the extent names integer parameters; while the program compiles: the declaration restates each contract, and the access and extent are what the checks track |
//! | how many elements a launch touches | the contract's extent, through the launch's arguments | a range provably shorter does not compile; otherwise `new` (or each `run`, for sizes a run gives) refuses a shorter range and a cast that changed a count (`len as i32` of a `len` past `i32::MAX`) |
//! | that `&out` writes all of its range | the contract (`MEMPLAN_WRITES`) | an empty grid, which runs nothing, given a non-empty `&out` range is refused by `new` or `run`; an extent the checks cannot follow counts as the whole argument, so `new` refuses it shorter than its argument |
//! | where each parameter lies in the argument buffer | the compiled kernel | `new` asks the driver (`cuFuncGetParamInfo`) |
//! | everything above, for an `unsafe kernel` | your declaration | only the driver's account at `new` |
//! | that the body waits for the work before it before it touches memory | the compiled PTX, read by `memplan-build` | proved per architecture (below); a kernel not proved launches as usual |
//!
//! Safe Rust states none of these facts: a declaration restates them, and
//! must agree, or names types whose `unsafe` impls vouch for them. A
//! kernel whose source states no contract for a pointer (a library's, say)
//! is declared `unsafe kernel`; a Rust type that merely shares a class's
//! name, or an alias of the same size, matches nothing.
//!
//! **Early launches.** A kernel whose body opens with
//! `memplan_wait_for_previous()` (from `memplan.cuh`), or with
//! `cudaGridDependencySynchronize()`, reads and writes nothing until the
//! kernel before it on its stream has finished and its memory is visible.
//! memplan launches such a kernel early (programmatic dependent launch:
//! `cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_
//! SERIALIZATION`), so that it starts while the one before it finishes,
//! which on an H200 took `benches/small_ops`' 100 one-block saxpys,
//! replayed as a graph, from 1.32 to 0.86 us a kernel
//! (`notes/gpu-run-early-launches-one-gpu.log`). Nothing is declared: `memplan-build` proves it from the PTX
//! nvcc compiled each architecture's code from (the wait comes before
//! anything but reading the parameters and moving registers: no load,
//! store, branch or call), and the runtime launches early only on a GPU
//! of compute capability 9.0 or newer whose code, as the driver picks it
//! (the machine code of its major version, or the PTX it compiles), is
//! proved, and for kernels of images `memplan-build` made
//! ([`Kernel::launches_early`](crate::Kernel::launches_early) says).
//! Plans, graphs and `Kernel::launch` alike. An op that is no kernel
//! (a copy, a fill, an event) between two kernels orders them as
//! always. A timed run may show such a kernel starting before the one
//! before it ended: its first instructions ran then, and the time it
//! spent waiting counts as busy, so the report's time saved by overlap
//! counts it too. Code compiled with `-G` is not proved (its entry opens
//! with a label and a branch); with `-lineinfo` it is.
//!
//! A declaration that disagrees is one error at its name, which says what
//! differs, shows the C++ and gives a declaration that matches it. For an
//! image of the crate being compiled (`from BLUR`, `from kernels::BLUR`,
//! made by `include_kernels!` from this crate's build step), it reads as
//! an ordinary error (`error[E0277]: parameter `c` is not `&out` ...`):
//! the macro reads the signatures the build step wrote beside the images
//! and runs the check itself, and rustc confirms its verdict against the
//! image the path really names. Wherever the macro cannot tell (an image
//! of another crate, a type other than a primitive, a path that names
//! another image of that name), the check rustc evaluates reports it, as
//! `error[E0080]: evaluation panicked: parameter `c` ...`: the same
//! message, never a guessed one.
//!
//! A class is passed by a Rust type that names it:
//!
//! ```
//! # use memplan::prelude::*;
//! use memplan::{Float4, KernelValue};
//!
//! /// `struct Affine { float scale; float offset; };` of classes.cu.
//! #[repr(C)]
//! #[derive(Clone, Copy)]
//! struct Affine {
//!     scale: f32,
//!     offset: f32,
//! }
//!
//! // SAFETY: two floats, as the C++ struct; no pointers.
//! unsafe impl KernelValue for Affine {
//!     const CPP_NAME: Option<&'static str> = Some("Affine");
//! }
//!
//! memplan! {
//!     plan Scale(n: usize, a: Affine) {
//!         // affine4(MEMPLAN_UPDATES(n) float4 *v, Affine a, int n)
//!         kernel affine4(v: &mut [Float4; n], a: Affine, n: i32) from memplan_kernels::CLASSES;
//!         host h: [Float4; n] pinned;
//!         device v: [Float4; n];
//!         stream s;
//!         on s {
//!             copy h -> v;
//!             launch affine4<<<blocks(n, 256), 256>>>(v, a, n as i32);
//!             copy v -> h;
//!         }
//!     }
//! }
//! ```
//!
//! `memplan::include_kernels!()` embeds a crate's images with `unsafe`
//! (each is its build step's promise that nvcc wrote the bytes), so a
//! crate under `#![forbid(unsafe_code)]` keeps its kernels in a sibling
//! crate whose `lib.rs` is that one line (as `memplan_kernels` is) and
//! depends on it:
//!
//! ```
//! #![forbid(unsafe_code)]
//! use memplan::prelude::*;
//!
//! memplan! {
//!     plan AddOne(n: usize) {
//!         kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
//!         device d: [f32; n];
//!         fill d with 0.0;
//!         launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! ### Extents
//!
//! A buffer parameter's extent says how many elements from its start the
//! kernel touches, in terms of the kernel's integer value parameters:
//! `&[f32; n]`, `&out [f32; rows * cols]` (integers, parameters, `+ - * /
//! %`, parentheses): the contract's, restated, or the promise of an
//! `unsafe kernel`, which may leave it out (the kernel then touches the
//! whole argument). At each launch the extent is rewritten in the plan's
//! sizes through the arguments, so each value an extent names should be a
//! size of the plan, cast to the parameter's type if need be (`len as
//! i32`). Then:
//!
//! - a launch whose buffer is provably shorter than the extent does not
//!   compile; one the arithmetic cannot judge is checked by `new`, which
//!   also refuses a cast that changed the value (`len as i32` of a `len`
//!   above `i32::MAX`), so the extent is what the kernel sees;
//! - the checks track what the extent says, not the whole argument: a
//!   kernel writing the first half of a buffer does not race with a copy
//!   into the second half, and does not count as writing it.
//!
//! A value an extent names that is not a size of the plan (a call, a value
//! parameter) is fine too: `new` then computes the extent from the values
//! the kernel receives (refusing a negative one) and checks it, and
//! the checks track the whole argument, so an `&out` argument must then be
//! exactly as long as the extent.
//!
//! The extent is computed exactly, without the wrapping the kernel's own
//! `int` arithmetic might do; a kernel that touches past its extent breaks
//! its contract, as a wrong element type would.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     plan Halves(half: usize) {
//!         kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
//!         host   out: [f32; 2 * half] pinned;
//!         device d: [f32; 2 * half];
//!         stream a, b;
//!         event filled;
//!         on a {
//!             fill d[..half] with 1.0;
//!             launch process_data<<<blocks(half, 256), 256>>>(d, half as i32);
//!         }
//!         on b {
//!             fill d[half..] with 5.0; // the kernel touches only d[..half]
//!             record filled;
//!         }
//!         on a {
//!             wait filled;
//!             copy d -> out;
//!         }
//!     }
//! }
//! ```
//!
//! ## Host buffers
//!
//! `host name: [T; len] kind;` declares host memory the plan allocates
//! (zeroed), of one of these kinds:
//!
//! | kind | allocation | for |
//! | --- | --- | --- |
//! | `pageable` | a `Vec` | synchronous copies; simplest, slowest |
//! | `pinned` (the default) | `cuMemAllocHost` | asynchronous copies at full bus speed |
//! | `mapped`, `pinned(mapped)` | `cuMemHostAlloc` + `DEVICEMAP` | kernels reading and writing it over the bus ("zero-copy") |
//! | `pinned(write_combined)` | `cuMemHostAlloc` + `WRITECOMBINED` | buffers the host writes and the device reads |
//! | `pinned(portable)` | `cuMemHostAlloc` + `PORTABLE` | memory pinned for every context |
//!
//! The flags combine: `pinned(mapped, write_combined, portable)`. After a
//! run, `plan.host()` and `plan.host_mut()` give the host buffers as slices.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     plan ZeroCopy(n: usize) {
//!         kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
//!         host   input: [f32; n] pinned(write_combined, mapped), output: [f32; n] mapped;
//!         stream work;
//!         on work {
//!             launch scale_by_two<<<blocks(n, 256), 256>>>(input, output, n as i32);
//!         }
//!     }
//! }
//! ```
//!
//! ## Device buffers
//!
//! `device name: [T; len];` is device memory (`cuMemAlloc`) the plan holds
//! for its lifetime. Memory needed only for part of a run is allocated in
//! stream order inside a stream block, `alloc tmp: [T; len];`, and freed
//! there with `free tmp;` (`cuMemAllocAsync` / `cuMemFreeAsync`: no device
//! synchronization, pool-backed). After a `free`, the name can be allocated
//! again.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     plan Scratch(n: usize) {
//!         host data: [f32; n] pinned;
//!         stream work;
//!         on work {
//!             alloc tmp: [f32; n];
//!             copy data -> tmp;
//!             copy tmp -> data;
//!             free tmp;
//!         }
//!     }
//! }
//! ```
//!
//! ## Streams and events
//!
//! `stream s1, s2 priority high;` declares non-blocking streams (never
//! ordered with the legacy default stream); `priority` is `high`, `normal`
//! (the default) or a CUDA priority number. `event e;` declares an event.
//! `on s { ... }` queues operations on stream `s`, in order; inside it,
//! `record e;` marks the current point of `s`, and `wait e;` makes later
//! work on the block's stream wait for the last `record e`. The host waits
//! with `sync s;` or `sync all;`, outside stream blocks.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     plan Handoff(n: usize) {
//!         host a: [f32; n] pinned, b: [f32; n] pinned;
//!         device d: [f32; n];
//!         stream producer priority high, consumer;
//!         event produced;
//!         on producer {
//!             copy a -> d;
//!             record produced;
//!         }
//!         on consumer {
//!             wait produced;
//!             copy d -> b;
//!         }
//!     }
//! }
//! ```
//!
//! ## Operations
//!
//! - `copy src -> dst;` copies a buffer, or a range of one (`a[0..n / 2]`,
//!   `a[k..]`, `a[..]`, `a[i..=j]`), into another; the direction (host to
//!   device, device to host, device to device, host to host) follows from
//!   the two buffers.
//! - `fill dst with value;` sets every element (`cuMemsetD8/16/32`).
//! - `launch k<<<grid, block>>>(args);` or `<<<grid, block, shared_bytes>>>`
//!   launches a kernel. Grid and block are one dimension or tuples of two
//!   or three, written with the sizes' arithmetic, `as u32`, and
//!   `blocks(n, 256)`, the language's one built-in function: the number of
//!   256-thread blocks that cover `n`. `new` computes them with checked
//!   arithmetic (a dimension that does not fit a `u32` is an error, never
//!   truncated) and checks them against the GPU and the kernel: threads per
//!   block, each dimension's limit, and dynamic shared memory (opting the
//!   kernel in above the default 48 KiB where the GPU allows). A launch
//!   whose grid has no blocks (`blocks(0, 256)`) is skipped: empty input is
//!   valid input, and the plan's other ops still run. Any other Rust
//!   expression that converts to [`Dim3`](crate::Dim3) works too, computed
//!   by `new` as written.
//!   Buffer arguments may be ranges: `da[n / 2..]` passes a pointer to
//!   element `n / 2`.
//! - `host(&a, &mut b, &out c) { ... }` runs Rust code on the CPU between
//!   GPU work, with the listed host buffers as slices and the plan's sizes
//!   and values in scope. As for kernels, `&a` reads, `&mut b` may read and
//!   write, and `&out c` only writes (it is a `&mut [T]` whose old contents
//!   the step promises not to read): the checks take each at its word, so
//!   a step that overwrites write-combined memory says `&out`. Code inside
//!   a plan sees nothing else of it: not `self`, not the caller's slices,
//!   so that every access is one the checks know about.
//!
//! Outside stream blocks operations are synchronous: each has finished when
//! the next begins. Inside `on s { ... }` they are queued on `s`, and the
//! host goes on at once.
//!
//! Fill values and launch arguments are Rust expressions over the plan's
//! sizes and values; `new` evaluates each once, and runs reuse the result.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     plan Steps(n: usize) {
//!         kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
//!         host data: [f32; n] pageable, total: [f32; 1] pageable;
//!         device d: [f32; n];
//!         copy data -> d;
//!         launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
//!         copy d[..n / 2] -> data[..n / 2];
//!         host(&data, &mut total) {
//!             total[0] = data[..n / 2].iter().sum();
//!         }
//!     }
//! }
//! ```
//!
//! ## Loops
//!
//! `for c in 0..k { ... }` repeats stream blocks for each `c` below `k`,
//! a size (a plan parameter, or any size written with them), so that the
//! number of chunks is chosen when the plan is made, not when it is
//! written. Inside, sizes may use `c` with `+ - * / %` and `min(a, b)`;
//! a launch argument that changes with `c` is a size cast to the
//! parameter's integer type, `(n - c * m) as i32`, which `new` computes for
//! each iteration and writes in the parameter's own type (read from the
//! type, whatever its spelling), refusing a value that does not fit. A
//! cast to another primitive integer type than the parameter's does not
//! compile, as such a value would not outside a loop.
//!
//! Declarations may be *sets* of several, counted by a size: `stream
//! lanes[s];`, `event freed[r];`, `device ring[r]: [f32; m];` (a ring of
//! `r` device buffers of `m` elements, one allocation). A loop uses one
//! element of each set per iteration, indexed by an expression of `c`:
//! `on lanes[c % s] { ... }` (round robin), `record freed[c % r];`,
//! `copy input[..] -> ring[c % r][..len];`. `new` checks every index
//! against its set's count (an error naming the op), and `sync lanes;`
//! waits for every stream of a set.
//!
//! A loop may name ranges, `let r = c * m..min(c * m + m, n);`, used as
//! `a[r]` (or `ring[c % q][r]`) and `r.len()`; one may use those named
//! before it.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     /// output = input + 1, `m` elements at a time through a ring of `q`
//!     /// device buffers: input of any length in `q * m` of device memory.
//!     plan OutOfCore(n: usize, m: usize, k: usize, q: usize) {
//!         kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
//!         host   input: [f32; n] pinned, output: [f32; n] pinned;
//!         device ring[q]: [f32; m];
//!         stream up, lanes[q];
//!         event  loaded[q], freed[q];
//!         for c in 0..k {
//!             let chunk = c * m..min(c * m + m, n); // the last chunk is shorter
//!             let used = 0..chunk.len();
//!             on up {
//!                 wait freed[c % q];    // the buffer's previous chunk is downloaded
//!                 copy input[chunk] -> ring[c % q][used];
//!                 record loaded[c % q];
//!             }
//!             on lanes[c % q] {
//!                 wait loaded[c % q];
//!                 launch process_data<<<blocks(chunk.len(), 256), 256>>>(ring[c % q][used], chunk.len() as i32);
//!                 copy ring[c % q][used] -> output[chunk];
//!                 record freed[c % q];
//!             }
//!         }
//!     }
//! }
//! # fn use_it(ctx: &Context) -> memplan::Result<()> {
//! let (n, m) = (1 << 30, 1 << 24);
//! let plan = OutOfCore::new(ctx, n, m, n.div_ceil(m), 4)?; // 256 MiB of device memory
//! # Ok(()) }
//! ```
//!
//! `new` unrolls the loop once: each iteration's ops are resolved to
//! driver calls with their own addresses, streams and events, so a run
//! costs what the unrolled plan would, and [`graph()`](crate::PlanGraph)
//! captures it. A `wait` for an event no earlier op of the run recorded
//! (a ring buffer's first use) waits for nothing, as in CUDA, and is left
//! out.
//!
//! **What is checked.** The body is checked as one iteration `c`, with
//! `c + 1 <= k`, together with the rest of the plan; then beside a later
//! iteration `c′` (any `c′ > c`), for races between iterations:
//!
//! - every range must lie inside its buffer for *every* `c` below `k`,
//!   provably (`a[c * m..(c + 1) * m]` of an `[f32; n]` does not compile:
//!   some `k` takes it past the end; end it at `min((c + 1) * m, n)`, or
//!   size the buffer `[f32; k * m]`);
//! - two iterations on streams that may differ must touch disjoint ranges
//!   (`c * m..min(c * m + m, n)` and the same of `c′` are apart) or be
//!   ordered; the error names both iterations and says how;
//! - a set's element is shared by iterations whose index is equal (`c %
//!   r` and `c′ % r`; an index that differs for every `c`, such as `c`,
//!   `c + 1` or `2 * c`, is never shared). Two such iterations are ordered if they run on one
//!   stream of a set indexed the same way, or if the later one waits for
//!   an event of a set indexed the same way that the body waits for
//!   *before* recording it (as `freed` above: iteration `c′` then waits
//!   for the previous user of its ring buffer, which waited for the one
//!   before, and so on back to `c`). A ring buffer reused without such a
//!   wait is a race, reported with the `record`/`wait` that fixes it;
//! - a plain event recorded in the loop orders a later iteration if the
//!   body waits for it before recording it (as for a set, one of one
//!   element), or if every record of it is on a plain stream (every
//!   iteration records it there, in order). Events of a loop are used
//!   only in it, and stream-ordered memory is not allocated there;
//! - a loop may run no iterations (`k = 0`): two ops outside it are
//!   ordered only by what orders them without its body, never by a
//!   `record` and a `wait` inside it. A loop whose count is at least 1
//!   for every size (`0..2`, `0..n + 1`, `0..n / 4 + 1`) always runs, and
//!   what one iteration's `record` and `wait` order holds after it.
//!
//! What the loop writes counts for the reads of the same iteration. After
//! the loop, it counts where the checks can name what all the iterations
//! wrote together: chunks that follow each other, `s(c)..s(c + 1)` (as
//! `d[c * m..(c + 1) * m]`), are `s(0)..s(k)` together (`d[0..k * m]`),
//! also when the loop runs none; a range that does not move with `c`
//! counts where the loop always runs. Chunks with gaps or overlaps, or
//! ended at `min(..)`, do not count after the loop: read such results on
//! the host (plan host buffers start initialized), or write them again. A
//! plan has one loop.
//!
//! **Schedules.** The loop runs as written, so the schedule is the
//! plan's. For a stream of chunks, the one that reaches the copy bound is
//! a stream for each engine, joined by events: uploads on one stream never
//! wait behind another chunk's download, the kernels follow on a second,
//! downloads on a third. The chunk count trades the time only one engine
//! works (the first upload, the last download: fewer chunks, longer) for a
//! gap the copy engine takes between copies (about 3 us on an H200: more
//! chunks, more gaps); for the 768 MiB vector add on an H200, 16 to 64
//! chunks were within 2 to 5% of the copy bound, and 256 were 13 to 16%
//! off it. Chunks of whole 4 KiB pages copy faster than unaligned ones.
//! Round robin over a set (`on lanes[c % s]` for everything) is the
//! classic schedule; there a chunk's upload waits in its stream for the
//! download of the chunk before it. `examples/pipeline.rs` measures both,
//! and `benches/pipeline.rs` against raw driver calls and the bound.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     plan Pipelined(n: usize, m: usize, k: usize) {
//!         kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
//!         host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
//!         device da: [f32; n], db: [f32; n], dc: [f32; n];
//!         stream up, add, down;
//!         event  loaded, added;
//!         for i in 0..k {
//!             let r = i * m..min(i * m + m, n);
//!             on up   { copy a[r] -> da[r]; copy b[r] -> db[r]; record loaded; }
//!             on add  { wait loaded; launch vadd<<<blocks(r.len(), 256), 256>>>(da[r], db[r], dc[r], r.len() as i32); record added; }
//!             on down { wait added; copy dc[r] -> c[r]; }
//!         }
//!     }
//! }
//! ```
//!
//! ## Several GPUs
//!
//! `gpus gpu[g];` makes a plan run on `g` GPUs: `new` takes a slice of
//! contexts instead of one (`gpu[i]` is the `i`th, and their count must
//! be `g`, a size `new` takes). A plan on no GPUs could never run: a
//! count written as 0 does not compile, and `new` refuses a `g` of 0,
//! naming the declaration. Every device buffer and stream says which GPU
//! it is on: `on gpu[e]` (GPU `e`, a size: one that is at least `g` for
//! every size, as `gpu[g]`, does not compile, and `new` refuses any other
//! past the GPUs), or for a set, `on gpu` (element `i` on GPU `i`; `new`
//! refuses a set longer than the GPUs, naming it). `new` makes each buffer and stream once, on its GPU, so
//! the count and placements are sizes of the plan's parameters, never of
//! a run (`run len: usize` cannot place one). Host memory is on no GPU: pinned memory of such a
//! plan is made portable, so every GPU reaches it, and mapped memory is
//! reached by kernels on every GPU. Stream-ordered memory is on the GPU
//! of the stream that allocates it.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     /// `y = 2x`, shard `i` on GPU `i`.
//!     plan Spread(n: usize, g: usize) {
//!         gpus   gpu[g];
//!         kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
//!         host   x: [f32; n * g] pinned, y: [f32; n * g] pinned;
//!         device part[g]: [f32; n] on gpu, doubled[g]: [f32; n] on gpu;
//!         stream s[g] on gpu;
//!         for i in 0..g {
//!             on s[i] {
//!                 copy x[i * n..i * n + n] -> part[i];
//!                 launch scale_by_two<<<blocks(n, 256), 256>>>(part[i], doubled[i], n as i32);
//!                 copy doubled[i] -> y[i * n..i * n + n];
//!             }
//!         }
//!     }
//! }
//! # fn use_it() -> memplan::Result<()> {
//! let gpus = (0..Context::count()).map(Context::new).collect::<memplan::Result<Vec<_>>>()?;
//! let mut plan = Spread::new(&gpus, 1 << 20, gpus.len())?;
//! plan.run()?;
//! # Ok(()) }
//! ```
//!
//! **What is checked.**
//!
//! - *Reach.* A kernel reaches the memory of its stream's GPU, and host
//!   memory that is mapped. Given another GPU's buffer it does not
//!   compile, unless the plan declares `peer gpu;`: then `new` turns on
//!   peer access between every two of the GPUs (`cuCtxEnablePeerAccess`),
//!   and fails, naming the declaration, where the hardware cannot. A
//!   kernel has no slower path to fall back on, so the plan must ask.
//!   Stream-ordered memory stays on its GPU, `peer` or not (peer access
//!   does not open a pool's memory to other GPUs), and is freed on a
//!   stream of that GPU.
//! - *Copies and fills* touch device memory of their stream's GPU, except
//!   that a copy between two GPUs' memories (`copy a -> b`, `a` on one,
//!   `b` on another) may be queued on either GPU's stream. Such a copy is
//!   `cuMemcpyAsync` between the two GPUs' addresses (unlike
//!   `cuMemcpyPeerAsync`, a graph can hold it; with peer access on, it
//!   measured as fast): over NVLink or PCIe with peer access on, and
//!   staged through host memory by the driver without it, so it needs no
//!   `peer`.
//! - *Which GPU* is decided from the placements as written: `part[i]` on
//!   stream `s[i]` is one GPU when both are placed `on gpu`; where the
//!   checks cannot show two indices equal (`part[i]` on `s[i + 1]`), they
//!   refuse, saying so.
//! - *Order.* Streams of different GPUs are ordered by events as any two
//!   streams are (a `wait` on one GPU for an event recorded on another is
//!   `cuStreamWaitEvent`, which the driver allows), so every race and
//!   lifetime check holds across GPUs unchanged.
//! - Launches run in stream blocks: outside, no stream names the GPU.
//!
//! **At run time.** Each op is queued in its GPU's context. An event is
//! made once for each GPU, since the driver records an event only on a
//! stream of its own GPU: a `record` uses its stream's GPU's, a `wait`
//! the one last recorded. Kernels are loaded on every GPU. Timing is by
//! CUPTI only, which sees every GPU (events would time one GPU's streams).
//! A CUDA graph ([`graph()`](crate::PlanGraph), `set_replay`) holds every
//! GPU's work, launched with one call on the plan's first stream; a copy
//! between GPUs is `cuMemcpyAsync` for that reason, since a graph cannot
//! hold `cuMemcpyPeerAsync`. Plans with collectives between several GPUs
//! of one process are refused: NCCL warns that they may deadlock in graphs
//! (a graph's launch may wait for the other GPUs' parts, which one thread
//! launches only after it). A plan per GPU, one rank each (`ranks`),
//! replays its collectives.
//!
//! ### Collectives
//!
//! NCCL's collectives are ops of a stream block, each a GPU's part (a
//! *rank*'s) of one collective: `all_reduce sum grads[i];` (in place) or
//! `all_reduce sum grads[i] -> sums[i];`, `reduce_scatter max a[i] ->
//! b[i];` (`sum`, `prod`, `min`, `max`, `avg`), `all_gather a[i] ->
//! b[i];`, `broadcast a[i] from 0;` (or `a[i] -> b[i] from 0`), `send a[i]
//! to (i + 1) % g;` and `recv b[i] from (i + g - 1) % g;` (roots and peers
//! are ranks, sizes). Their buffers are device memory of the stream's GPU,
//! of a type NCCL knows (`i8`, `u8`, `i32`, `u32`, `i64`, `u64`, `f32`,
//! `f64`).
//!
//! In a plan with `gpus`, rank `i` is `gpu[i]`, and every GPU takes part
//! in each collective once: rank `i`'s part is written once, and the loop
//! over the GPUs queues each GPU's, on its stream. memplan queues the parts
//! of one collective together, as one NCCL group (one thread driving every
//! GPU must), in an order that keeps each stream's ops, each event's
//! records and waits, and the host's turns where they are: what a GPU
//! queues after its part stays after it. Consecutive `send`s and `recv`s
//! of a stream block are one group, so that a send and the receive it
//! meets do not wait for each other; NCCL runs a group's calls at once, in
//! no order, so a receive may not write what another of them touches (a
//! compile error). Every other collective is a group of its own.
//!
//! ```
//! # use memplan::prelude::*;
//! memplan! {
//!     /// Each GPU scales its shard; the shards are summed on every GPU.
//!     plan DataParallel(n: usize, g: usize) {
//!         gpus   gpu[g];
//!         kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
//!         host   x: [f32; n * g] pinned, y: [f32; n * g] pinned;
//!         device part[g]: [f32; n] on gpu, grads[g]: [f32; n] on gpu;
//!         stream s[g] on gpu;
//!         for i in 0..g {
//!             on s[i] {
//!                 copy x[i * n..(i + 1) * n] -> part[i];
//!                 launch scale_by_two<<<blocks(n, 256), 256>>>(part[i], grads[i], n as i32);
//!                 all_reduce sum grads[i];
//!                 copy grads[i] -> y[i * n..(i + 1) * n];
//!             }
//!         }
//!     }
//! }
//! ```
//!
//! A plan that is one rank of a job of one process per GPU (how a job
//! spans hosts) declares `ranks world;` instead of `gpus`: its `new` takes
//! a [`nccl::Rank`](crate::nccl::Rank) after the context (the job's
//! [`UniqueId`](crate::nccl::UniqueId), its rank count, this rank) and
//! joins the job's communicator (`ncclCommInitRank`), returning once every
//! rank has. A launcher starts the processes (srun, mpirun, mpiexec,
//! torchrun), with `NCCL_NVLS_ENABLE` set in each process's environment;
//! [`nccl::Job::from_env`](crate::nccl::Job::from_env) reads each one's
//! rank, the rank count and its GPU from the launcher's variables, and
//! [`Job::nccl_rank`](crate::nccl::Job::nccl_rank) makes the `Rank`, the
//! ranks meeting through NCCL's own bootstrap at `NCCL_COMM_ID=host:port`
//! ([`nccl::Meeting`](crate::nccl::Meeting)).
//! `examples/data_parallel_ranks.rs` runs so, or as its own launcher for
//! one host (it makes the id and hands its text to every rank in the
//! environment). Each process makes its plan with its own sizes,
//! and NCCL's behaviour when ranks give a collective different counts or
//! roots is undefined (a hang at best): so `new`, once joined, exchanges a
//! fingerprint of the plan and the sizes its collectives depend on among
//! the ranks (two small all-gathers), and every rank fails alike, naming
//! the first difference, where they would not match
//! (`Fault::RanksDisagree`). A run that gives such a size (a `run` size,
//! the length of a caller's slice) exchanges it the same way before it
//! queues anything. Sizes no collective depends on (a shard of each rank's
//! own length) may differ. A rank that fails on its own stops the others
//! with it (`Fault::RankFailed`) instead of leaving them in a collective:
//! `new` joins the job first, so a rank that then cannot make its plan
//! says so, and every run that can differ from rank to rank (by sizes,
//! values or slices) first agrees that every rank is ready. A rank that
//! cannot join at all (a rank number past the count, NCCL missing,
//! `NCCL_NVLS_ENABLE` unset) cannot tell the others, which wait in
//! `ncclCommInitRank` as any NCCL job's would. A `ranks` plan has no
//! `send` or `recv`: every rank runs the same plan and would name the same
//! peer, so they could never meet (a compile error).
//!
//! **What is checked.** Each part is an op on its stream that reads its
//! send buffer and writes its receive buffer (in place, reads and writes
//! it), so a buffer written by another stream without an
//! event, or read by the host while the collective may run, is a race like
//! any other (`tests/ui/fail/collective_buffer_written_by_another_stream.rs`).
//! A collective claims no order between ranks' streams: NCCL ends the
//! parts together, but an op of one GPU after it still needs an event to
//! follow another GPU's part. Collectives need `gpus` or `ranks`, device
//! memory, a type NCCL knows and one type on both sides. `new` checks the
//! rest, naming the op: every GPU takes part once in each collective, the
//! GPUs' parts agree (element count and type, reduction, root), the
//! lengths (an `all_gather` receives the rank count times what it sends),
//! roots and peers are ranks, the sends from one GPU to another meet its
//! receives one by one in order, each of as many elements,
//! and no GPU's part waits (through its stream or an event) for work
//! queued after another GPU's part, which would leave the GPUs waiting for
//! each other for ever. Plans with collectives are not captured as graphs.
//! A broadcast in place reads the root's buffer: in a `ranks` plan, which
//! every process runs, that is every rank's; in a plan on several GPUs the
//! checks do not know which part is the root's, so there it counts only as
//! a write, and an unwritten root buffer is not caught.
//!
//! **Timing.** A timed run reports each GPU's part as an op of its stream,
//! timed by the work NCCL ran on that GPU for the part's group (NCCL's
//! kernels, or its copies), and the timeline draws the parts on a lane of
//! collectives beside the copy engines'. The parts of one group started
//! together: sends and receives of one GPU in one group run as one kernel
//! of NCCL's, so they share a span. A rank alone in its communicator may
//! give the GPU nothing to do for a collective in place (NCCL leaves a sum
//! of one rank as it is): such a part is reported where work was recorded
//! for it, and otherwise left out, as a copy of no bytes is.
//!
//! ## Sizes
//!
//! Every length, range bound and launch dimension is a size: a `usize`
//! written with the plan's `usize` parameters, integers, constants, `+ - *
//! / %`, parentheses, `as usize`, calls, and `xs.len()` of a caller's
//! slice. The checks compare sizes without knowing their values, with the
//! arithmetic below; where it cannot decide, a check reports what it could
//! not prove rather than guess.
//!
//! **What is one size.** Sizes are kept as sums of products with integer
//! coefficients, in one order, so that `2 * c * w * h`, `c * (2 * w) * h`
//! and `h * w * c + h * w * c` are the same size, and `k * (c * w * h)` is
//! `c * h * k * w`. A quotient `a / b` is a size of its own, `⌊a / b⌋`,
//! after what can come out of it has: `(4 * n) / 2` is `2 * n`, `(2 * n) /
//! 4` is `n / 2`, `(a * b) / a` is `b`, `(a + b) / a` is `1 + b / a`. A
//! remainder `a % b` is `a - b * (a / b)`. Messages print sizes in that
//! form, with the parentheses their meaning needs: `2 * (n / 4)`, which is
//! not `n / 2`.
//!
//! **`min(a, b)`** is a size of its own, at most `a` and at most `b`:
//! `min(c * m + m, n)` ends a chunk at the buffer's end. It is also one of
//! the two: where a comparison does not follow without it, it is tried in
//! each case, `min(a, b)` as `a` where `a <= b` and as `b` where `b <= a`
//! (for the first three `min`s of the comparison, so at most 8 cases), and
//! holds when it holds in every case. So a chunk clamped at both ends,
//! `min(c * m, len)..min(c * m + m, len)`, is at most `m` long: where `c *
//! m <= len` it starts at `c * m` and ends by `c * m + m`, and elsewhere it
//! is empty.
//!
//! **Terms it does not look into.** A call (`f(n)`, `n.pow(2)`), the
//! length of a caller's slice measured at each run (`xs.len()`), and `x as
//! usize` of anything but the plan's own sizes (a signed parameter, a
//! constant of another type, `(n as u8) as usize`) are each a size of their
//! own, never negative, equal to the same text and to nothing else.
//! Anything else (`n << 2`, `1.5`) is an error at its tokens.
//!
//! **What it proves.** A comparison such as "this range ends where that
//! one starts" holds when it follows, by adding up non-negative multiples
//! of what is known, from:
//! - every size is `>= 0`, and so is every product of sizes;
//! - floor division: `2 * (n / 2) <= n <= 2 * (n / 2) + 1`, and likewise
//!   for any divisor (at least 1: `new` refuses a division by zero), and
//!   `n / 4` is `(n / 2) / 2`;
//! - what `new` checks before anything runs, for the ranges compared:
//!   each lies inside its buffer and does not run backwards, and no `a -
//!   b` written in it goes below zero;
//! - the bounds the plan states, `run len: usize <= cap`, which `new` and
//!   each run check;
//! - for a range in a loop, inside its buffer: quotients by one divisor
//!   in the order of their numerators, where that order follows from the
//!   rest (`c < (len + m - 1) / m` with `len <= cap` gives `c < (cap + m -
//!   1) / m`, so `sums[c..c + 1]` fits `(cap + m - 1) / m` elements);
//! - each of those times a product of sizes (`1 <= a` gives `b <= a * b`);
//! - sizes are whole numbers (`2 * a >= 1` means `a >= 1`).
//!
//! So `2 * (n / 4) <= n / 2`, `k * (n / k) <= n`, `(c + 1) * x <= d * x`
//! for literals `c < d`, `d[n - 1..n]` lies after `d[0..n / 2]`, and chunk
//! `2 * c * w * h..3 * c * w * h` is apart from `0..c * w * h`. What it
//! does not do is reason about divisibility: whether `2 * a * b`
//! can lie between `3 * b` and `4 * b` (only for `a = 1.5`) turns on `a`
//! being whole, and a check that needs it reports the two ranges as
//! possibly overlapping. Writing ranges in one unit (all in `n / k`, or all
//! in `n / 2` and `n / 4`) keeps every comparison within reach.
//!
//! Each comparison weighs a bounded number of facts (32 from the plan, 64
//! inequalities in all), so its cost is bounded whatever the plan; and a
//! size, like every expression in a plan, may nest at most 128 deep (`((((n
//! ...))))`) and chain at most 512 operators (`n + n + ...`): more is an
//! error at its tokens that says to name a part with a `const`, not a
//! crash.
//!
//! `new` computes every size once, as written, with checked arithmetic: a
//! step that would overflow or go below zero is an error naming the op or
//! declaration and the size (`the size `k + 2` cannot be computed: ...
//! overflows usize (k = 18446744073709551615)`), never a wrapped value. It
//! then checks every range against its buffer (inside it, not backwards),
//! and every copy's two lengths, before anything runs; lengths of caller
//! slices declared without one are checked at each run. What the
//! compile-time checks assume (no size wraps, every range lies within its
//! buffer) is what these checks make true.
//!
//! ## What a plan becomes
//!
//! `plan AddOne(n: usize) { ... }` becomes `struct AddOne` with:
//! - `new(&ctx, sizes and values...)`: makes every buffer, stream, event and
//!   kernel once, evaluates the plan's expressions, and checks its sizes,
//!   ranges and launches; a failure frees what was made before it.
//! - `check(&model, sizes and values...)`: the checks of `new` that need
//!   no GPU, on any machine, against a [`DeviceModel`](crate::DeviceModel)
//!   (`DeviceModel::named("sm_90")`, the limits NVIDIA documents for a
//!   compute capability): it takes what `new` takes, a model in place of
//!   each context, evaluates the same expressions, and gives the error
//!   `new` would give, through the same code. It checks the bounds of the
//!   sizes, the GPU count and a rank's place in its job, every size
//!   computed without wrapping, each range inside its buffer, copies of
//!   equal lengths, set indexes and the GPU each declaration is placed on,
//!   extents and the values they name, collectives' lengths, roots and
//!   peers, and each launch's grid, block and dynamic shared memory
//!   against the model's limits. It allocates and loads nothing, so what
//!   needs the GPU stays `new`'s: its memory, a kernel's own limits (its
//!   registers may allow fewer than 1024 threads a block; its static
//!   shared memory takes from the block's), the kernel's compiled
//!   parameters, peer access and NCCL. Ops that read what each run gives
//!   are checked by each run, as after `new`. For a plan that is one rank
//!   of a job, the [`Checked`](crate::Checked) it returns holds what the
//!   ranks compare when `new` joins them:
//!   [`agrees_with`](crate::Checked::agrees_with) another rank's says
//!   whether their `new`s would agree.
//!
//!   ```
//!   # use memplan::prelude::*;
//!   # memplan! { plan AddOne(n: usize) {
//!   #     kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
//!   #     host data: [f32; n] pinned;
//!   #     device on_gpu: [f32; n];
//!   #     stream work;
//!   #     on work { copy data -> on_gpu;
//!   #               launch process_data<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
//!   #               copy on_gpu -> data; } } }
//!   let h100 = DeviceModel::named("sm_90")?;
//!   AddOne::check(&h100, 1 << 20)?;
//!   // `n as i32` of an `n` above `i32::MAX` is not `n`: the kernel's
//!   // extent, `n`, would be wrong.
//!   let error = AddOne::check(&h100, 1 << 31).unwrap_err();
//!   assert_eq!(error.operation(), "launch process_data");
//!   # Ok::<(), memplan::Error>(())
//!   ```
//! - `run()` (or `run(slices...)`): queues every operation, waits for all
//!   of them (also when one fails), and returns a [`RunReport`]. With
//!   `set_timing(true)`, the report has each operation's time and
//!   bandwidth, and can be drawn as an SVG timeline or written as a Chrome
//!   trace (see [Timing](#timing)).
//! - `enqueue()`: queues every operation and returns an
//!   [`InFlight`](crate::InFlight) guard; until it is waited for, the
//!   plan is borrowed, so host code cannot touch its buffers (a borrow error,
//!   not a run-time check). Plans that borrow the caller's slices have no
//!   `enqueue`: a guard can be leaked, and the slices must not be.
//! - `submit()` and `wait()`: for a loop over batches. `submit` queues the
//!   run and returns at once, with no guard to hold: the plan stays in
//!   flight until `wait` (which returns the run's report, or `None` if
//!   none is in flight), and `host()` / `host_mut()` wait for it before
//!   they lend the buffers. Two plans taking turns keep the GPU busy
//!   while the host prepares the next batch (`examples/batches.rs`):
//!
//!   ```
//!   # use memplan::prelude::*;
//!   # memplan! { plan Saxpy(cap: usize, run len: usize, run a: f32) {
//!   #     kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
//!   #     host x: [f32; cap] pinned, y: [f32; cap] pinned;
//!   #     device dx: [f32; cap], dy: [f32; cap];
//!   #     stream s;
//!   #     on s { copy x[..len] -> dx[..len]; copy y[..len] -> dy[..len];
//!   #            launch saxpy<<<blocks(len, 256), 256>>>(len as i32, a, dx[..len], dy[..len]);
//!   #            copy dy[..len] -> y[..len]; } } }
//!   # fn go(ctx: &Context, batches: &[(Vec<f32>, Vec<f32>, f32)]) -> memplan::Result<Vec<f32>> {
//!   let mut plans = [Saxpy::new(ctx, 1 << 20)?, Saxpy::new(ctx, 1 << 20)?];
//!   let mut results = Vec::new();
//!   for (k, (x, y, a)) in batches.iter().enumerate() {
//!       let plan = &mut plans[k % 2];
//!       if k >= 2 {
//!           // batch k - 2's result; waits if it is still on the GPU
//!           results.extend_from_slice(&plan.host().y[..batches[k - 2].0.len()]);
//!       }
//!       plan.host_mut().x[..x.len()].copy_from_slice(x);
//!       plan.host_mut().y[..y.len()].copy_from_slice(y);
//!       plan.submit(x.len(), *a)?; // returns at once
//!   }
//!   # Ok(results) }
//!   ```
//!
//!   Plans that borrow the caller's slices have neither: their slices are
//!   lent for `run` alone.
//! - `graph()`: captures the plan as a CUDA graph
//!   ([`PlanGraph`](crate::PlanGraph)), replayed with one launch per
//!   run, for plans whose operations all run in stream blocks (others are
//!   refused with the reason, before anything else is checked). A plan
//!   with `run` parameters takes them, `graph(len, v)`: they are checked
//!   as `run` checks them (a length above its bound is refused with the
//!   same error), and the graph holds the ops as that run queues them,
//!   replayed as they are; runs of other sizes and values replay with
//!   `set_replay`.
//! - `set_replay(Replay::Graph)`: every later `run`, `enqueue` and
//!   `submit` replays a CUDA graph of its ops instead of queuing them one
//!   by one, with the same signature, checks and errors
//!   ([`Replay`](crate::Replay)). The first run of each *shape* captures
//!   its graph; later runs of that shape change, in place, the nodes of
//!   the ops whose sizes or values differ from what the graph holds
//!   (`cuGraphExecKernelNodeSetParams`, `...MemcpyNodeSetParams`,
//!   `...MemsetNodeSetParams`) and launch it once. A run's shape is what a
//!   graph holds fixed: its unrolled ops (so its loop counts), each op's
//!   stream and event, which of its copies, fills and launches are empty,
//!   a fill's memset unit, a stream-ordered allocation's size. The plan
//!   keeps [`GRAPHS_KEPT`](crate::GRAPHS_KEPT) (4) graphs, one a shape,
//!   and drops the one replayed longest ago: a batch loop whose last batch
//!   is short uses two, a loop count that changes and changes back finds
//!   its graph again. A run whose checks fail (a length above its bound)
//!   fails before any graph is touched. A rank's collectives (`ranks
//!   world;`) are captured into its graph as NCCL's kernels, which are not
//!   changed in place: a collective whose length or buffers change makes
//!   a shape of its own. Refused, with the reason, for plans a graph
//!   cannot hold: synchronous ops or host steps, the caller's slices,
//!   collectives between several GPUs of one process. A plan on several
//!   GPUs replays as one graph of all their work. `Replay::Direct` (the
//!   default) goes back to queuing. A launch whose value arguments are of
//!   a type with padding is set at every run (its bytes cannot be
//!   compared); the others only when they change. A replayed run's report
//!   has its wall time only, as a `graph()` replay's, and says how the run
//!   was replayed (`report.replayed`: `Captured`, or `Changed { nodes }`,
//!   the nodes changed in place). While a capture
//!   lasts, CUDA refuses `cuCtxSynchronize` on its GPU from any thread and
//!   ends the capture: memplan tries such a capture again (3 times), and
//!   code of yours that synchronizes the whole GPU from another thread at
//!   that moment gets CUDA's error.
//!
//!   ```
//!   # use memplan::prelude::*;
//!   memplan! {
//!       plan Scale(cap: usize, run len: usize <= cap, run v: f32) {
//!           host   out: [f32; cap] pinned;
//!           device d: [f32; cap];
//!           stream s;
//!           on s {
//!               fill d[..len] with v;
//!               copy d[..len] -> out[..len];
//!           }
//!       }
//!   }
//!   # fn demo(ctx: &Context) -> memplan::Result<()> {
//!   let mut plan = Scale::new(ctx, 1 << 20)?;
//!   plan.set_replay(Replay::Graph)?;
//!   for (len, v) in [(1 << 20, 1.0), (1 << 20, 2.0), (1000, 3.0)] {
//!       plan.run(len, v)?; // one graph launch each; the last two change it
//!   }
//!   # Ok(()) }
//!   ```
//! - `host()` / `host_mut()`: the host buffers, as slices, in a struct with
//!   one field per buffer (`plan.host_mut().data.copy_from_slice(..)`),
//!   named [`HostView<Plan>`](crate::HostView) and
//!   [`HostViewMut<Plan>`](crate::HostViewMut) where you need its type.
//! - Threads: a plan is `Send`, not `Sync`. It can move to another thread
//!   (a worker that runs it, a pool that takes plans in turns), in flight
//!   or not: a run submitted on one thread is waited for on another, a
//!   graph captured on one replays on another, and a plan dropped on any
//!   thread waits for its work first. One thread uses it at a time, as
//!   `&mut self` on every method that queues says. Each run makes the
//!   plan's GPU current on the thread that runs it, and leaves it current;
//!   waiting needs no GPU current.
//! - `SUMMARY` and `DIAGRAM` (Mermaid): the plan described. Errors name
//!   the op or declaration and where it is written (`plan AddOne: copy
//!   on_gpu -> data at src/main.rs:14:13: ...`).
//!
//! The plan's logic (building it, running it, waiting, graphs, reports)
//! lives once, in the runtime: the generated code is the plan's static
//! description, its host buffers, `new` and `check` (which evaluate your
//! expressions, in safe code) and methods that forward to the runtime. It can be read:
//! `tests/expand/` keeps one example's expansion. Nothing of yours is ever
//! placed inside an `unsafe` block, so a crate with
//! `#![forbid(unsafe_code)]` gets rustc's own error for an expression that
//! needs one. The plan's buffers, streams and in-flight state are private
//! to the runtime. The module that invokes `memplan!` can reach one thing
//! more than other code, the plan's one field, the runtime's engine those
//! methods forward to: it can call the engine's (hidden) methods, which
//! check what they are given as the plan's do, or move the engine from one
//! plan of the type to another, in flight or not, and the run's wait goes
//! with it; nothing it can do touches memory in use.
//!
//! ## Timing
//!
//! `plan.set_timing(true)` times every later run; off (the default) it
//! costs nothing, and nothing is loaded, until a plan of the process is
//! timed by CUPTI (below): CUPTI then records the process's driver calls
//! and work until it exits, which made each driver call about 2 us slower
//! on an H100 (turned off again, it deadlocked inside NVIDIA's libraries
//! with other threads' driver calls). Time plans in a process of their
//! own, or last; beside threads that use the driver hard, time by events
//! (`Timing::Events`). There CUPTI 13.0 itself is fragile: NVIDIA's
//! libraries alone, under twelve threads loading modules and making and
//! dropping streams, events and graphs, hung when recording was turned
//! off and on again, and crashed when records were collected from a
//! buffer per thread, CUPTI 13's default (memplan has every thread share
//! buffers, which ran 3 stress runs of 60 s without a crash;
//! `notes/gpu-run-cupti-kinds-one-gpu.log`). Each copy's and kernel's start
//! and end are taken on the device from the activity records of NVIDIA's
//! CUPTI, loaded at run time (`libcupti.so` from the loader's path or the
//! CUDA toolkit; `MEMPLAN_CUPTI` names the file). Where CUPTI cannot be
//! loaded or started (another profiler holds it, as `compute-sanitizer`
//! does), timing falls back to CUDA events around each op on its stream,
//! and the report says so and why ([`Clock`](crate::Clock)): an event
//! times an op from when its stream reached it, so an upload queued behind
//! another stream's uploads on the one copy engine seems to take their
//! time too. `set_timing(Timing::Events)` asks for events. The report also
//! has the host's spans: queuing the ops, each host step, waiting. A graph
//! replay reports its wall time only. memplan takes CUPTI for itself from
//! the first plan timed by it to the end of the process: beside another
//! CUPTI client in the process (a profiler library), time by events; where
//! CUPTI could not be started once, later runs are timed by events too.
//!
//! A [`Timeline`](crate::Timeline) puts several runs, of one plan or of
//! several, on one time axis; its picture has a lane for the host, one per
//! stream of each plan, and one per engine (host-to-device copies,
//! kernels, device-to-host copies), so idle engines show as gaps:
//!
//! ```no_run
//! # use memplan::prelude::*;
//! # memplan! { plan Batch(n: usize) {
//! #     kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
//! #     host x: [f32; n] pinned; device dx: [f32; n]; stream s;
//! #     on s { copy x -> dx; launch process_data<<<blocks(n, 256), 256>>>(dx, n as i32); copy dx -> x; } } }
//! # fn go(ctx: &Context) -> Result<(), Box<dyn std::error::Error>> {
//! let mut plans = [Batch::new(ctx, 1 << 20)?, Batch::new(ctx, 1 << 20)?];
//! let mut timeline = Timeline::new();
//! for plan in &mut plans {
//!     plan.set_timing(true)?;
//! }
//! for k in 0..6 {
//!     let plan = &mut plans[k % 2];
//!     if let Some(report) = plan.wait()? {
//!         timeline.add(report); // the run before this plan's last
//!     }
//!     plan.host_mut().x.fill(k as f32);
//!     plan.submit()?;
//! }
//! for plan in &mut plans {
//!     timeline.add(plan.wait()?.expect("a run in flight"));
//! }
//! std::fs::write("batches.svg", timeline.to_svg())?;
//! std::fs::write("batches.trace.json", timeline.to_chrome_trace())?; // ui.perfetto.dev
//! # Ok(()) }
//! ```
//!
//! Measured on an H200 (`benches/timeline.rs`): CUPTI timing makes a
//! `run` of the 4-stream x 16-chunk vector add, its report included,
//! about 1% longer than an untimed run in the same process, which CUPTI
//! records too (events: about 4.5%), and each upload that ran alone
//! on its engine shows 0.98 of the bandwidth of a lone upload timed on
//! the host.
//!
//! ## The checks
//!
//! Each is a compile error at your tokens with a `help:` line; all errors
//! of a plan come at once, and one mistake gives one error: a race is
//! reported once, at the earlier of its two ops, and the races that one
//! fix orders (a forgotten `wait` leaves every later stage of a pipeline
//! unordered) are one error, with that fix as its help and the other
//! pairs as notes. The fix is what the plan has first: a `wait` for an
//! event it records (put back where it was forgotten), a `record` it has
//! moved after the write it should mark; else a new event, or, for a
//! ring's slot that no event hands from one iteration to the next, a new
//! set of events recorded after the slot's last use and waited for before
//! its first. It is offered only where every check, run again on the plan
//! with it, finds those races gone and nothing new; the host's `sync`
//! before a host step or a synchronous copy is checked the same way.
//!
//! A help is either edits or advice. Edits are written in a few fixed
//! forms, so that a tool, or you, can apply them as written: ``declare
//! `event done;` ``, ``add `wait done;` on stream `s` before `copy d -> b` ``
//! (or `after`; `and` for the next), ``add `sync s;` before `host(&c)` ``,
//! and ``move `record e;` (line 12) after `copy a -> d` on stream `s` ``.
//! Every help in those forms is one the checks accepted on the plan
//! changed by it. Any other help is advice: a choice between designs
//! (`pinned` memory or a synchronous copy), or a change no edit of the
//! plan's text says (the size of a buffer). `tests/ui/helps.txt` lists,
//! for each compile-fail case, which errors carry edits, and the test
//! beside it applies them and compiles the result. After any
//! error the plan type still has `new`, `check`, `SUMMARY` and `DIAGRAM`, so the
//! code that uses it adds none, and a syntax error in one plan of a
//! `memplan!` does not hide the checks of the others. The help uses what
//! you wrote: a misspelt name gets the closest declaration of the kind its
//! place wants (`on` a stream, `wait` an event), a missing declaration is
//! written with the plan's own sizes, and a `record` that comes before the
//! write it should mark, or on another stream, is to be moved, not
//! duplicated. Each row below is one rule of the checks, by its name
//! (`memplan-macros-core`'s `check::rules` lists them, and this table is
//! written from that list); `tests/ui/fail/` has a case for each.
//!
//! | refused | because | rule |
//! | --- | --- | --- |
//! | a name not declared, declared twice, or of the wrong kind (`free` of memory the plan keeps, `peer` of GPUs the plan does not run on); `gpus` without a count; two plans of one name | plan types and their items cannot otherwise collide: everything a plan generates besides its type is out of reach | `names` |
//! | a set used without its index, outside the loop, or indexed two ways in one loop; one declaration indexed as a set; a range the loop does not name | a loop uses one element of each set, the same in all its body | `set_indexes` |
//! | a length, range, count or index memplan cannot read as a size | sizes are written with integers, `usize` plan parameters and constants, `+ - * / %`, parentheses, `as usize`, calls and `xs.len()` of a caller's slice: what the checks can prove things of | `sizes` |
//! | a kernel parameter's extent written in other than integers, the kernel's integer value parameters, `+ - * / %` and parentheses | each launch computes the extent from its arguments | `extents_in_parameters` |
//! | an op written where it cannot run: `record`, `wait`, `alloc`, `free`, a collective or (on several GPUs) a launch outside stream blocks; `sync` or a host step inside one | events mark points in a stream; `sync` and host steps wait on the host | `ops_where_they_run` |
//! | `registered` on a parameter that is not a slice, `run` on a slice, a bound (`<= cap`) on a parameter that is not a size, a set of buffers that are not `device` memory | a caller's slice is given to each run already, and page-locked for it; host and stream-ordered memory are one buffer each | `declaration_forms` |
//! | a second `for` loop in a plan | split the work into two plans, or into one loop | `one_loop` |
//! | an event recorded or waited for both in the loop and outside it | a `wait` after the loop would wait for its last iteration only | `events_stay_in_their_loop` |
//! | in a plan on several GPUs: a device buffer or stream not placed on one, placed past the plan's GPUs, or one buffer or stream placed as a set (`on gpu`); host memory placed; a count of GPUs that is 0; `ranks` beside `gpus` | `new` makes each buffer and stream on its GPU once | `gpu_placement` |
//! | a buffer's length, a set's count, the count of GPUs or a placement that reads a `run` parameter or a slice's length measured at each run | `new` allocates every buffer, makes every set and places each on its GPU once | `sizes_fixed_at_new` |
//! | a kernel declaration that disagrees with the C++ | name, count, pointer or value, element type, width, signedness, a class's name and layout, each pointer's contract (access and extent); `unsafe kernel` for modules of unknown origin and pointers without a contract | `kernel_declarations` |
//! | a range that provably leaves its buffer, or runs backwards | other ranges are checked by `new`, as errors naming the op | `ranges_inside` |
//! | in a loop, a range that some `k` takes past its buffer's end | every iteration's ranges must provably fit | `loop_ranges_inside` |
//! | a launch whose buffer is provably shorter than its parameter's extent | other extents are checked by `new`, or by each `run` where a run's size decides; so is an empty grid given an `&out` range to write | `extents_fit` |
//! | a receive that writes what another send or receive of its NCCL group touches | NCCL runs a group's calls at once, in no order | `collective_groups_apart` |
//! | a collective in a plan without `gpus` or `ranks`, on host memory, of a type NCCL does not know, or of two types | `new` checks that every GPU takes part, lengths, roots and peers | `collective_memory` |
//! | a `send` or `recv` in a `ranks` plan | every rank runs the same plan and would name the same peer, so no send would meet its receive | `no_sends_in_ranks_plans` |
//! | a copy between different element types, or ranges of different lengths | lengths are compared symbolically: `n / 2` and `n - n / 2` differ for odd `n` | `copy_shapes` |
//! | a copy whose source and destination overlap |  | `copy_overlap` |
//! | a copy or fill into a caller's `&[T]` | borrow it `&mut [T]` in the plan's parameters | `writes_to_read_only` |
//! | a host step listing a buffer twice, or borrowing a read-only slice `&mut` |  | `host_step_borrows` |
//! | a kernel argument in pageable, unmapped pinned, or caller memory | the GPU cannot reach it | `kernels_reach_their_memory` |
//! | a copy of pageable memory in a stream block, or a fill of host memory there | the copy would silently block: make it `pinned` or `registered`; a fill in a stream block writes device memory | `stream_ops_on_their_memory` |
//! | a host step given device memory | the CPU cannot touch it: copy it to a host buffer first | `host_steps_on_host_memory` |
//! | a device-to-host copy into write-combined memory, or a host step or synchronous copy reading it (`&` or `&mut`) | the CPU reads it uncached: a step that only writes it borrows it `&out` | `write_combined_memory_is_not_read` |
//! | in a plan on several GPUs: a kernel given another GPU's memory without `peer gpu;`, a copy, fill or collective on a stream of another GPU than its memory's, a launch outside stream blocks | where the checks cannot show two placements equal, they refuse and say so | `gpu_reach` |
//! | a kernel of more parameters than memplan passes | pass a pointer to a struct of the rest, or split the kernel | `kernel_parameter_count` |
//! | a launch whose arguments disagree with the kernel's declaration | count, buffer or value, element type, writes to read-only memory, a count cast to another integer type than its parameter's | `launch_arguments` |
//! | an expression `new` computes once that reads what changes: a fill value or a launch value (not a count) that reads a loop's variable, a launch dimension outside the size arithmetic that reads a loop's variable or a `run` parameter | `new` evaluates the plan's Rust once; sizes in the arithmetic (and counts, `(n - c * m) as i32`) are computed at each iteration and each run | `computed_once` |
//! | a read of device memory no earlier operation wrote | written ranges must cover the read | `written_before_read` |
//! | use after `free`, a double `free`, an `alloc` never freed | the last would leak on every run | `allocation_lifetimes` |
//! | `wait e` before any `record e` | CUDA waits only for records already issued | `waits_after_records` |
//! | two operations on different streams, or on a stream and the host (a host step, a synchronous op), touching overlapping ranges of one buffer, one writing (or allocating, or freeing), that nothing orders | both are reported, with the `record`/`wait` or `sync` that orders them | `unordered_accesses` |
//! | the same between two iterations of a loop, a ring buffer reused before its previous chunk is done included | both iterations are named, with the fix | `iterations_apart` |
//!
//! Declared and unused buffers, streams and events are rustc's own
//! warnings at their names, `unused variable`, and an unused kernel is an
//! unused function: `#[allow(unused)]` on the plan (or around it)
//! silences them, `#![deny(warnings)]` makes them errors, and a name that begins with `_` (`stream _spare;`)
//! is unused on purpose, as a Rust variable's is.
//!
//! ```compile_fail
//! # use memplan::prelude::*;
//! memplan! {
//!     plan Racy(n: usize) {
//!         host a: [f32; n] pinned, b: [f32; n] pinned;
//!         device d: [f32; n];
//!         stream s1, s2;
//!         on s1 { copy a -> d; }
//!         on s2 { copy d -> b; } // error: reads `d` while `s1` may write it
//!     }
//! }
//! ```
//!
//! ## Where the syntax departs from the first sketch, and why
//!
//! - `&out [T]` joins `&[T]` and `&mut [T]` in kernel declarations: `&mut`
//!   means what it means in Rust (may read and write), so an output-only
//!   parameter needs its own word, or every output buffer would have to be
//!   written before the kernel that writes it.
//! - Each kernel names its module (`from MODULE`) instead of one
//!   `module = ...;` per plan: plans may use kernels of several modules.
//! - Stream-ordered memory is an operation, `alloc tmp: [T; n];` inside the
//!   stream block that allocates it, rather than a declaration: where it is
//!   allocated is part of its meaning, and a freed name can be allocated
//!   again.
//! - Host buffers are reached through `host()` / `host_mut()` rather than
//!   fields: a leaked `InFlight` guard (`mem::forget`) must not let host code
//!   touch memory the GPU is using, so the accessors wait for such a run
//!   first; and a buffer named `run` cannot collide with a method.
//! - Host steps list what they touch, `host(&a, &mut b) { ... }`, so they
//!   are checked like every other reader and writer.
//!
//! [`RunReport`]: crate::RunReport
