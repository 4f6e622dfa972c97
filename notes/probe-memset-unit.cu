// Probe: does the unit of a memset (cuMemsetD8 / D16 / D32) cost the GPU
// anything? memplan fills a zero with the smallest unit that repeats to
// the element (D8 for 0.0f32); small_ops' hand-written baseline uses D32.
//  1. A graph of the two fills and 100 PDL saxpy launches (small_ops'
//     shape), zero fill as D8 or D32, replayed and waited for.
//  2. One memset alone, each unit, 4 KiB to 1 GiB, timed by events.
//   nvcc -O2 -arch=sm_90 probe-memset-unit.cu -o probe-memset-unit -lcuda
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); exit(1); } } while (0)
#define CU(x) do { CUresult err_ = (x); if (err_ != CUDA_SUCCESS) { printf("%s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)err_); exit(1); } } while (0)
__global__ void saxpy_pdl(int n, float a, const float *x, float *y) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)n; i += (long long)blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static void zero(CUdeviceptr p, size_t bytes, int unit, cudaStream_t s) {
  if (unit == 1) CU(cuMemsetD8Async(p, 0, bytes, s));
  else if (unit == 2) CU(cuMemsetD16Async(p, 0, bytes / 2, s));
  else CU(cuMemsetD32Async(p, 0, bytes / 4, s));
}
int main() {
  const int n = 256, REPS = 2000, BLOCKS = 9, K = 100;
  float *x, *y; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("%s: graph of 2 fills + %d PDL saxpy, median of %d blocks of %d replays waited for, us a node\n", p.name, K, BLOCKS, REPS);
  for (int round = 0; round < 2; round++) for (int unit : {4, 1, 2}) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    CU(cuMemsetD32Async((CUdeviceptr)x, 0x3f800000u, n, s));
    zero((CUdeviceptr)y, n * 4, unit, s);
    for (int k = 0; k < K; k++) {
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 256; cfg.stream = s;
      cudaLaunchAttribute attr[1] = {}; attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; attr[0].val.programmaticStreamSerializationAllowed = 1;
      cfg.attrs = attr; cfg.numAttrs = 1; CK(cudaLaunchKernelEx(&cfg, saxpy_pdl, n, 1.0f, (const float *)x, y));
    }
    cudaGraph_t g; CK(cudaStreamEndCapture(s, &g)); cudaGraphExec_t e; CK(cudaGraphInstantiate(&e, g, 8)); CK(cudaGraphUpload(e, s));
    for (int r = 0; r < 200; r++) CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
    std::vector<double> gw;
    for (int b = 0; b < BLOCKS; b++) { double t0 = now(); for (int r = 0; r < REPS; r++) { CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s)); } gw.push_back((now() - t0) / REPS / (K + 2)); }
    printf("  round %d, zero fill by D%d: %.3f us a node\n", round, unit * 8, med(gw));
    CK(cudaGraphExecDestroy(e)); CK(cudaGraphDestroy(g));
  }
  size_t most = 1ull << 30; CUdeviceptr big; CU(cuMemAlloc(&big, most));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  printf("one zero fill alone, by events, median of 21 (us; GB/s):\n");
  for (size_t bytes = 4096; bytes <= most; bytes *= 16) {
    printf("  %10zu bytes:", bytes);
    for (int unit : {1, 2, 4}) {
      std::vector<double> t;
      for (int r = 0; r < 21; r++) { CK(cudaEventRecord(a, s)); zero(big, bytes, unit, s); CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1e3); }
      double us = med(t); printf("  D%d %9.2f us %7.1f GB/s", unit * 8, us, bytes / us / 1e3);
    }
    printf("\n");
  }
  return 0;
}
