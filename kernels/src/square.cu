// out = in * in on integers, so results compare exactly.
#include <memplan.cuh>
#include "common.cuh"

extern "C" __global__ void square(MEMPLAN_READS(n) const int *in, MEMPLAN_WRITES(n) int *out, int n) {
    FOR_EACH_INDEX(i, n) { out[i] = in[i] * in[i]; }
}
