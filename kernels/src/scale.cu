// out = 2 * in: one read and one write per element, the access pattern that
// decides whether zero-copy (mapped) host memory beats copies.
#include <memplan.cuh>
#include "common.cuh"

extern "C" __global__ void scale_by_two(MEMPLAN_READS(n) const float *in,
                                        MEMPLAN_WRITES(n) float *out, int n) {
    FOR_EACH_INDEX(i, n) { out[i] = 2.0f * in[i]; }
}
