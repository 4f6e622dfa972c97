// Kernels that tests use to write known data and to read data back.
#include <memplan.cuh>
#include "common.cuh"

// out[i] = start + i, as 32-bit unsigned integers: every element distinct.
extern "C" __global__ void iota_u32(MEMPLAN_WRITES(n) unsigned int *out, unsigned int start, int n) {
    FOR_EACH_INDEX(i, n) { out[i] = start + (unsigned int)i; }
}

// *sum += data[0] + ... + data[n-1] (wrapping), for checking data that never
// leaves the device.
extern "C" __global__ void sum_u32(MEMPLAN_READS(n) const unsigned int *data,
                                   MEMPLAN_ATOMIC(1) unsigned long long *sum, int n) {
    unsigned long long local = 0;
    FOR_EACH_INDEX(i, n) { local += data[i]; }
    atomicAdd(sum, local);
}

// *out = data[0], read before waiting for the work before it: a kernel
// memplan-build must not prove to wait first (tests/signatures.rs).
extern "C" __global__ void reads_then_waits(MEMPLAN_READS(1) const unsigned int *data,
                                            MEMPLAN_WRITES(1) unsigned int *out) {
    unsigned int first = data[0];
    memplan_wait_for_previous();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *out = first;
    }
}
