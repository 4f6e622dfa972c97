// Probe: does a kernel loaded from a fatbin with cuModuleLoadData (how
// memplan loads kernels) cost a graph node more than the same kernel
// registered by the CUDA runtime? A graph of 100 dependent one-block saxpy
// nodes, replayed and waited for, us a node:
//   A  the grid-stride saxpy compiled here, launched by the runtime;
//   B  memplan-kernels' saxpy, this file including kernels/src/saxpy.cu,
//      launched by the runtime (the same source as C, another load path);
//   C  memplan-kernels' saxpy from memplan's fatbin (argv[1]), loaded with
//      cuModuleLoadData and launched with cuLaunchKernel, as memplan does;
//   D  the same fatbin loaded with cuLibraryLoadData (CUDA 12's
//      context-independent loading, what the runtime uses).
//   nvcc -O2 -arch=sm_90 -I<memplan-build/include> -I<kernels/src> probe-module-kernel.cu -cudart static
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); exit(1); } } while (0)
#define DK(x) do { CUresult err_ = (x); if (err_ != CUDA_SUCCESS) { printf("%s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)err_); exit(1); } } while (0)
#include "saxpy.cu"
__global__ void stride(int n, float a, const float *x, float *y) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)n; i += (long long)blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
template <class F> static void* sym(const char *name, F **out) {
  cudaDriverEntryPointQueryResult q; CK(cudaGetDriverEntryPointByVersion(name, (void **)out, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess) { printf("no %s\n", name); exit(1); } return (void *)*out;
}
int main(int argc, char **argv) {
  const int n = 256, K = 100, REPS = 2000, BLOCKS = 9;
  if (argc < 2) { printf("usage: %s saxpy.fatbin\n", argv[0]); return 2; }
  FILE *f = fopen(argv[1], "rb"); if (!f) { perror(argv[1]); return 1; }
  std::vector<char> image(1 << 20); size_t len = fread(image.data(), 1, image.size(), f); fclose(f); image.resize(len);
  CK(cudaSetDevice(0)); CK(cudaFree(0));
  decltype(&cuModuleLoadData) moduleLoad; sym("cuModuleLoadData", &moduleLoad);
  decltype(&cuModuleGetFunction) moduleGet; sym("cuModuleGetFunction", &moduleGet);
  decltype(&cuLibraryLoadData) libraryLoad; sym("cuLibraryLoadData", &libraryLoad);
  decltype(&cuLibraryGetKernel) libraryGet; sym("cuLibraryGetKernel", &libraryGet);
  decltype(&cuLaunchKernel) launchKernel; sym("cuLaunchKernel", &launchKernel);
  CUmodule module; DK(moduleLoad(&module, image.data()));
  CUfunction fmodule; DK(moduleGet(&fmodule, module, "saxpy"));
  CUlibrary library; DK(libraryLoad(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel klibrary; DK(libraryGet(&klibrary, library, "saxpy"));
  float *x, *y; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMemset(x, 0, n * 4)); CK(cudaMemset(y, 0, n * 4));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("%s; %d dependent nodes, median of %d blocks of %d replays, each waited for (us a node)\n", p.name, K, BLOCKS, REPS);
  const char *names[] = {"A runtime, stride saxpy compiled here", "B runtime, memplan-kernels' saxpy.cu", "C cuModuleLoadData(memplan's fatbin)", "D cuLibraryLoadData(memplan's fatbin)"};
  for (int round = 0; round < 2; round++) for (int way = 0; way < 4; way++) {
    int nn = n; float a = 1.0f; const float *xx = x; float *yy = y; void *args[] = {&nn, &a, &xx, &yy};
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < K; k++) {
      if (way == 0) stride<<<1, 256, 0, s>>>(n, 1.0f, x, y);
      else if (way == 1) saxpy<<<1, 256, 0, s>>>(n, 1.0f, x, y);
      else DK(launchKernel(way == 2 ? fmodule : (CUfunction)klibrary, 1, 1, 1, 256, 1, 1, 0, (CUstream)s, args, nullptr));
    }
    cudaGraph_t g; CK(cudaStreamEndCapture(s, &g)); cudaGraphExec_t e; CK(cudaGraphInstantiate(&e, g, 0)); CK(cudaGraphUpload(e, s));
    for (int r = 0; r < 200; r++) CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
    std::vector<double> t;
    for (int b = 0; b < BLOCKS; b++) {
      double t0 = now(); for (int r = 0; r < REPS; r++) { CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s)); } t.push_back((now() - t0) / REPS / K);
    }
    std::sort(t.begin(), t.end());
    printf("  round %d  %-42s %7.3f\n", round, names[way], t[BLOCKS / 2]);
    CK(cudaGraphExecDestroy(e)); CK(cudaGraphDestroy(g));
  }
  return 0;
}
