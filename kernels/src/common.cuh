// Shared by every kernel of memplan-kernels.
#pragma once

// A grid-stride loop: correct for any grid size, so a launch configuration
// that is too small makes a kernel slow, never wrong. The index is 64-bit:
// with an `int` one, a thread numbered past INT_MAX (a grid of 2^21 blocks
// of 1024), or a stride step past it (an `n` above 2^30), would wrap to a
// negative index and touch memory before the buffer, breaking the contract.
#define FOR_EACH_INDEX(i, n)                                                   \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;        \
         i < (long long)(n); i += (long long)blockDim.x * gridDim.x)
