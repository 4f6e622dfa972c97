// Kernels that take C++ classes: a vector type through a pointer and a
// struct by value, for the checks that match them with Rust types by
// layout; and a struct that carries a pointer, which no safe declaration
// can pass (the checks cannot see where its pointer points).
#include <memplan.cuh>
#include "common.cuh"

// A scale and an offset, passed by value.
struct Affine {
    float scale;
    float offset;
};

// Each of the four floats of v[i] becomes x * a.scale + a.offset.
extern "C" __global__ void affine4(MEMPLAN_UPDATES(n) float4 *v, Affine a, int n) {
    FOR_EACH_INDEX(i, n) {
        float4 x = v[i];
        v[i] = make_float4(x.x * a.scale + a.offset, x.y * a.scale + a.offset,
                           x.z * a.scale + a.offset, x.w * a.scale + a.offset);
    }
}

// Where to write, and how much: a pointer inside a value.
struct Target {
    float *out;
    int n;
};

// target.out[i] = 1 for i < target.n.
extern "C" __global__ void through_target(Target target) {
    FOR_EACH_INDEX(i, target.n) { target.out[i] = 1.0f; }
}
