// Kernels of each linkage, for the checks of plans' kernel declarations
// against the C++ and for the GPU tests that launch them by name:
// `extern "C"`, C++ linkage (a mangled symbol), and a template's explicit
// instances, with parameters of several widths and signedness.
#include <cstddef>
#include <memplan.cuh>
#include "common.cuh"

// out[i] = in[i] * 2.
extern "C" __global__ void c_linkage(MEMPLAN_READS(n) const float *in,
                                     MEMPLAN_WRITES(n) float *out, int n) {
    FOR_EACH_INDEX(i, n) { out[i] = in[i] * 2.0f; }
}

// out[i] = in[i] + 1, with an unsigned count: a C++ name, mangled.
__global__ void cpp_linkage(MEMPLAN_READS(n) const double *in, MEMPLAN_WRITES(n) double *out,
                            unsigned int n) {
    FOR_EACH_INDEX(i, n) { out[i] = in[i] + 1.0; }
}

// out[i] = in[i] * factor, for each element type instantiated below.
template <typename T>
__global__ void scaled(MEMPLAN_READS(n) const T *in, MEMPLAN_WRITES(n) T *out, T factor, int n) {
    FOR_EACH_INDEX(i, n) { out[i] = in[i] * factor; }
}
template __global__ void scaled<float>(const float *, float *, float, int);
template __global__ void scaled<int>(const int *, int *, int, int);

// out[0] = a + b + c + d: one parameter of each width and signedness.
extern "C" __global__ void widths(MEMPLAN_WRITES(1) unsigned long long *out, long long a,
                                  unsigned int b, size_t c, short d) {
    out[0] = (unsigned long long)a + b + c + (unsigned long long)d;
}

// data[i] += 1, with no contract: the source does not say how far the
// kernel reaches, so only `unsafe kernel` declares it.
extern "C" __global__ void uncontracted(float *data, int n) {
    FOR_EACH_INDEX(i, n) { data[i] += 1.0f; }
}
