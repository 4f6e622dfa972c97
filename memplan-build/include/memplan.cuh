// memplan.cuh: kernel contracts, the facts a memplan plan trusts about a
// kernel's body, written next to the parameters they are about.
//
// Before each pointer parameter of a kernel that plans launch, say what the
// body does with it and how many elements from its start it touches, in
// terms of the kernel's integer parameters:
//
//     #include <memplan.cuh>
//
//     extern "C" __global__ void vadd(MEMPLAN_READS(n) const float *a,
//                                     MEMPLAN_READS(n) const float *b,
//                                     MEMPLAN_WRITES(n) float *c, int n);
//
// MEMPLAN_READS(e)    reads elements [0, e) and writes none.
// MEMPLAN_WRITES(e)   writes every element of [0, e) in any launch of at
//                     least one block, and reads none before writing it.
// MEMPLAN_UPDATES(e)  reads and writes elements of [0, e).
// MEMPLAN_ATOMIC(e)   reads and writes elements of [0, e) with atomic
//                     operations only.
//
// An extent `e` is written with integer literals, the kernel's integer
// parameters, + - * / % and parentheses: `n`, `rows * cols`, `1`. A plan
// never launches with a negative value for a parameter an extent names.
// memplan computes the extent exactly; the kernel's own arithmetic must not
// wrap either. Touching an element outside [0, e) breaks the contract, as
// writing through a `const` pointer would.
//
// memplan-build reads these from nvcc's front end and plans' `kernel`
// declarations must agree with them. A contract must read the same in
// every compilation of the file (the host's and each GPU architecture's):
// an extent whose macros depend on __CUDA_ARCH__ stops the build. Everywhere else (any other compiler,
// any other use of the file) the macros expand to nothing: the kernel
// compiles and runs exactly as without them. The file stands alone; copy it
// next to kernels that other builds compile too.
#pragma once

#if defined(__MEMPLAN_CONTRACTS__)
// Through a second macro, so that an extent's own macros are expanded
// before it becomes text (`MEMPLAN_READS(TILE)` reads `16` elements).
#define MEMPLAN_CONTRACT_TEXT_(...) #__VA_ARGS__
#define MEMPLAN_CONTRACT_(kind, ...) \
    __attribute__((annotate("memplan:" kind ":" MEMPLAN_CONTRACT_TEXT_(__VA_ARGS__))))
#else
#define MEMPLAN_CONTRACT_(kind, ...)
#endif

#define MEMPLAN_READS(...) MEMPLAN_CONTRACT_("reads", __VA_ARGS__)
#define MEMPLAN_WRITES(...) MEMPLAN_CONTRACT_("writes", __VA_ARGS__)
#define MEMPLAN_UPDATES(...) MEMPLAN_CONTRACT_("updates", __VA_ARGS__)
#define MEMPLAN_ATOMIC(...) MEMPLAN_CONTRACT_("atomic", __VA_ARGS__)

// memplan_wait_for_previous(): waits until the work queued before this
// kernel on its stream has finished and its memory is visible, and lets
// the work after it start launching. Called first in a kernel's body,
// before it reads or writes any memory, it lets memplan launch the kernel
// while the work before it still runs (programmatic dependent launch, on
// GPUs of compute capability 9.0 and newer), which shortens a chain of
// small kernels. memplan-build proves from the PTX that the body waits
// first (nothing but reading parameters and moving registers before it);
// a kernel it cannot prove is launched as any other. Before sm_90, and
// outside nvcc, it does nothing.
#if defined(__CUDACC__)
__device__ __forceinline__ void memplan_wait_for_previous() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
#endif
