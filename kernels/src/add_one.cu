// The classic first CUDA program: add one to every element, in place.
#include <memplan.cuh>
#include "common.cuh"

extern "C" __global__ void process_data(MEMPLAN_UPDATES(n) float *data, int n) {
    FOR_EACH_INDEX(i, n) { data[i] += 1.0f; }
}
