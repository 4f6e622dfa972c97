// c = a + b, element by element.
#include <memplan.cuh>
#include "common.cuh"

extern "C" __global__ void vadd(MEMPLAN_READS(n) const float *a, MEMPLAN_READS(n) const float *b,
                                MEMPLAN_WRITES(n) float *c, int n) {
    FOR_EACH_INDEX(i, n) { c[i] = a[i] + b[i]; }
}

// c = a + b, after `rounds` dependent multiply-adds per element that leave
// the sum as it is: a vector add whose time can be set to match the copies
// around it (benches/pipeline.rs).
extern "C" __global__ void vadd_heavy(MEMPLAN_READS(n) const float *a, MEMPLAN_READS(n) const float *b,
                                      MEMPLAN_WRITES(n) float *c, int n, int rounds) {
    FOR_EACH_INDEX(i, n) {
        float x = a[i], acc = 0.0f;
        for (int r = 0; r < rounds; ++r) {
            acc = fmaf(acc, 0.5f, x);
        }
        // acc is finite (|acc| <= 2|x|), so acc * 0 is a zero.
        c[i] = a[i] + b[i] + acc * 0.0f;
    }
}
