// Probe: what a graph of K dependent tiny kernel nodes costs a node on this
// GPU, replayed and waited for, as small_ops replays a plan: the kernel
// small_ops launches (saxpy over one block), an empty kernel, and the same
// saxpy with programmatic dependent launch (PDL: the next node may start
// launching while this one runs; it waits in griddepcontrol.wait for this
// one's memory), the one driver feature that shortens a chain's node-to-node
// gap. Also the same launches by stream, no graph.
//   nvcc -O2 -arch=sm_90 probe-graph-floor.cu -o probe-graph-floor -lcuda
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); exit(1); } } while (0)
__global__ void saxpy(int n, float a, const float *x, float *y) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
// memplan-kernels' saxpy: a grid-stride loop with a 64-bit index.
__global__ void saxpy_stride(int n, float a, const float *x, float *y) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)n; i += (long long)blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}
__global__ void empty(int, float, const float *, float *) {}
// The same saxpy, written for PDL: lets the next kernel launch at once, then
// waits for the previous kernel's memory before touching y.
__global__ void saxpy_pdl(int n, float a, const float *x, float *y) {
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i];
}
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
typedef void (*Kern)(int, float, const float *, float *);
static void launch(cudaStream_t s, Kern k, bool pdl, int n, float a, const float *x, float *y) {
  cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 256; cfg.stream = s;
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr; cfg.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, k, n, a, x, y));
}
int main() {
  const int n = 256, REPS = 2000, BLOCKS = 9;
  float *x, *y; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
  CK(cudaMemset(x, 0, n * 4)); CK(cudaMemset(y, 0, n * 4));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); int drv; cudaDriverGetVersion(&drv);
  printf("%s, driver %d; median of %d blocks of %d replays, each waited for (us a node)\n", p.name, drv, BLOCKS, REPS);
  // fills: two memsets first, as small_ops' plan has.
  // prio: instantiated with cudaGraphInstantiateFlagUseNodePriority, as memplan instantiates.
  struct Way { const char *name; Kern k; bool pdl; bool fills; bool prio; } ways[] = {{"saxpy", saxpy, false, false, false}, {"empty", empty, false, false, false}, {"saxpy, PDL", saxpy_pdl, true, false, false}, {"empty, PDL", empty, true, false, false},
    {"stride", saxpy_stride, false, false, false}, {"fills+saxpy", saxpy, false, true, false}, {"fills+PDL", saxpy_pdl, true, true, false},
    {"saxpy, prio", saxpy, false, false, true}, {"PDL, prio", saxpy_pdl, true, false, true}};
  printf("%6s %-12s %10s %10s %12s\n", "nodes", "kernel", "graph", "stream", "graph, no wait");
  for (int K : {1, 10, 100}) for (auto &w : ways) {
    if (K != 100 && (w.k == saxpy_stride || w.fills || w.prio)) continue;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    if (w.fills) { CK(cudaMemsetAsync(x, 0, n * 4, s)); CK(cudaMemsetAsync(y, 0, n * 4, s)); }
    for (int k = 0; k < K; k++) launch(s, w.k, w.pdl, n, 1.0f, x, y);
    cudaGraph_t g; CK(cudaStreamEndCapture(s, &g)); cudaGraphExec_t e; CK(cudaGraphInstantiate(&e, g, w.prio ? cudaGraphInstantiateFlagUseNodePriority : 0)); CK(cudaGraphUpload(e, s));
    for (int r = 0; r < 200; r++) CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
    std::vector<double> gw, sw, gn;
    for (int b = 0; b < BLOCKS; b++) {
      double t0 = now(); for (int r = 0; r < REPS; r++) { CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s)); } gw.push_back((now() - t0) / REPS / K);
      t0 = now(); for (int r = 0; r < REPS; r++) { if (w.fills) { CK(cudaMemsetAsync(x, 0, n * 4, s)); CK(cudaMemsetAsync(y, 0, n * 4, s)); } for (int k = 0; k < K; k++) launch(s, w.k, w.pdl, n, 1.0f, x, y); CK(cudaStreamSynchronize(s)); } sw.push_back((now() - t0) / REPS / K);
      t0 = now(); for (int r = 0; r < REPS; r++) CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s)); gn.push_back((now() - t0) / REPS / K);
    }
    auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    printf("%6d %-12s %10.3f %10.3f %12.3f\n", K, w.name, med(gw), med(sw), med(gn));
    CK(cudaGraphExecDestroy(e)); CK(cudaGraphDestroy(g));
  }
  // PDL keeps the chain's order: each saxpy adds x (= 1) to y; after R replays of K nodes y = R*K.
  CK(cudaMemset(y, 0, n * 4)); float one = 1.0f; std::vector<float> ones(n, one); CK(cudaMemcpy(x, ones.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < 100; k++) launch(s, saxpy_pdl, true, n, 1.0f, x, y);
  cudaGraph_t g; CK(cudaStreamEndCapture(s, &g)); cudaGraphExec_t e; CK(cudaGraphInstantiate(&e, g, 0));
  for (int r = 0; r < 1000; r++) CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
  std::vector<float> h(n); CK(cudaMemcpy(h.data(), y, n * 4, cudaMemcpyDeviceToHost));
  int wrong = 0; for (float v : h) wrong += v != 100000.0f;
  printf("PDL chain, 1000 replays of 100 nodes: %d of %d elements wrong (y[0] = %g, expected 100000)\n", wrong, n, h[0]);
  return 0;
}
