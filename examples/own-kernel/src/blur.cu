// A 3x3 box blur over a batch of grayscale images, stored one after
// another, each `width * height` floats in rows. Pixels past an edge take
// the value of the nearest edge pixel.
//
// The MEMPLAN_ macros state what the kernel does with each buffer, and how
// many elements it touches: the plan's declaration restates them, and is
// checked against them. Outside memplan-build they expand to nothing.
#include <memplan.cuh>

extern "C" __global__ void box_blur(MEMPLAN_READS(width * height * count) const float *input,
                                    MEMPLAN_WRITES(width * height * count) float *output,
                                    int width, int height, int count) {
    long long pixels = (long long)width * height;
    long long total = pixels * count;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        const float *image = input + (i / pixels) * pixels;
        int x = (int)(i % width);
        int y = (int)((i % pixels) / width);
        float sum = 0.0f;
        for (int dy = -1; dy <= 1; ++dy) {
            int row = min(max(y + dy, 0), height - 1);
            for (int dx = -1; dx <= 1; ++dx) {
                int column = min(max(x + dx, 0), width - 1);
                sum += image[(long long)row * width + column];
            }
        }
        output[i] = sum / 9.0f;
    }
}
