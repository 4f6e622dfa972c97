// out = 2 * in: one read and one write per element, the access pattern that
// decides whether zero-copy (mapped) host memory beats copies.
#include "common.cuh"

extern "C" __global__ void scale_by_two(const float *in, float *out, int n) {
    FOR_EACH_INDEX(i, n) { out[i] = 2.0f * in[i]; }
}
