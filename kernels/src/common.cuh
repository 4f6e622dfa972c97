// Shared by every kernel of memplan-kernels.
#pragma once

// A grid-stride loop: correct for any grid size, so a launch configuration
// that is too small makes a kernel slow, never wrong.
#define FOR_EACH_INDEX(i, n)                                                   \
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n);               \
         i += blockDim.x * gridDim.x)
