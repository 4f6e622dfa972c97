// c = a + b, element by element.
#include "common.cuh"

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
    FOR_EACH_INDEX(i, n) { c[i] = a[i] + b[i]; }
}
