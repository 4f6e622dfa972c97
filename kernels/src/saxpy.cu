// y = a * x + y, element by element. Both kernels wait for the work
// before them first, so a chain of them starts each while the one before
// finishes (memplan_wait_for_previous, in memplan.cuh).
#include <memplan.cuh>
#include "common.cuh"

extern "C" __global__ void saxpy(int n, float a, MEMPLAN_READS(n) const float *x,
                                 MEMPLAN_UPDATES(n) float *y) {
    memplan_wait_for_previous();
    FOR_EACH_INDEX(i, n) { y[i] = a * x[i] + y[i]; }
}

// y = a * x + y, after `rounds` dependent multiply-adds per element that
// leave the result as it is: saxpy standing for a kernel with real work to
// do (examples/batches.rs).
extern "C" __global__ void saxpy_rounds(int n, float a, int rounds,
                                        MEMPLAN_READS(n) const float *x,
                                        MEMPLAN_UPDATES(n) float *y) {
    memplan_wait_for_previous();
    FOR_EACH_INDEX(i, n) {
        float acc = 0.0f;
        for (int r = 0; r < rounds; ++r) {
            acc = fmaf(acc, 0.5f, x[i]);
        }
        // acc is finite (|acc| <= 2|x|), so acc * 0 is a zero.
        y[i] = a * x[i] + y[i] + acc * 0.0f;
    }
}
