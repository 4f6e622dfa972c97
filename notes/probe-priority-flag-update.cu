// Probe: does instantiating with CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY
// (memplan's graphs) make a graph whose kernel nodes were just changed
// slower to replay than one instantiated without flags (small_ops' graph
// by hand)? small_ops shows memplan's value-changing replay of 100
// launches ~0.045 us a node slower to finish than the graph by hand
// changed node by node, beyond what it takes longer to queue.
// A graph of 2 memsets and 100 PDL saxpy launches, captured once,
// instantiated with flags 0 and 8, each in 3 copies on streams of their
// own; per replay: (change every kernel node,) launch, wait.
//   nvcc -O2 -arch=sm_90 probe-priority-flag-update.cu -lcuda
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); exit(1); } } while (0)
__global__ void saxpy(int n, float a, const float *x, float *y) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)n; i += (long long)blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main() {
  const int n = 256, K = 100, REPS = 200, BLOCKS = 15, COPIES = 3;
  float *x, *y; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
  cudaStream_t cap; CK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
  CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
  CK(cudaMemsetAsync(x, 0, n * 4, cap)); CK(cudaMemsetAsync(y, 0, n * 4, cap));
  std::vector<cudaGraphNode_t> nodes;
  for (int k = 0; k < K; k++) {
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 256; cfg.stream = cap;
    cudaLaunchAttribute attr[1] = {}; attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr; cfg.numAttrs = 1; CK(cudaLaunchKernelEx(&cfg, saxpy, n, 1.0f, (const float *)x, y));
    cudaStreamCaptureStatus st; const cudaGraphNode_t *deps; size_t nd;
    CK(cudaStreamGetCaptureInfo(cap, &st, NULL, NULL, &deps, NULL, &nd)); nodes.push_back(deps[0]);
  }
  cudaGraph_t g; CK(cudaStreamEndCapture(cap, &g));
  cudaKernelNodeParams kp; CK(cudaGraphKernelNodeGetParams(nodes[0], &kp));
  const unsigned long long flags[2] = {0, cudaGraphInstantiateFlagUseNodePriority};
  cudaGraphExec_t exec[2][COPIES]; cudaStream_t s[2][COPIES];
  for (int c = 0; c < COPIES; c++) for (int f = 0; f < 2; f++) {
    CK(cudaGraphInstantiateWithFlags(&exec[f][c], g, flags[f]));
    CK(cudaStreamCreateWithFlags(&s[f][c], cudaStreamNonBlocking));
    CK(cudaGraphUpload(exec[f][c], s[f][c])); CK(cudaStreamSynchronize(s[f][c]));
  }
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("%s: 2 memsets + %d kernel nodes, us a node per replay (median of %d blocks of %d; fastest/slowest of %d copies)\n", p.name, K, BLOCKS, REPS, COPIES);
  // t[change][flag][copy]: blocks of each way in turns.
  std::vector<double> t[2][2][COPIES], q[2][2][COPIES];
  for (int b = 0; b < BLOCKS + 1; b++) for (int change = 0; change < 2; change++) for (int f = 0; f < 2; f++) for (int c = 0; c < COPIES; c++) {
    double total = 0, queued = 0;
    for (int r = 0; r < REPS; r++) {
      float a = 1.0f + (r & 1); int nn = n; const float *cx = x; float *cy = y;
      void *params[] = {&nn, &a, &cx, &cy};
      double t0 = now();
      if (change) for (int k = 0; k < K; k++) {
        cudaKernelNodeParams np = kp; np.kernelParams = params;
        CK(cudaGraphExecKernelNodeSetParams(exec[f][c], nodes[k], &np));
      }
      CK(cudaGraphLaunch(exec[f][c], s[f][c]));
      double t1 = now();
      CK(cudaStreamSynchronize(s[f][c]));
      total += now() - t0; queued += t1 - t0;
    }
    if (b > 0) { t[change][f][c].push_back(total / REPS / (K + 2)); q[change][f][c].push_back(queued / REPS / (K + 2)); }
  }
  const char *way[2] = {"unchanged", "every node changed"};
  const char *flag[2] = {"flags 0", "USE_NODE_PRIORITY"};
  for (int change = 0; change < 2; change++) for (int f = 0; f < 2; f++) {
    double best = 1e9, worst = 0, bq = 0;
    for (int c = 0; c < COPIES; c++) { double d = med(t[change][f][c]); if (d < best) { best = d; bq = med(q[change][f][c]); } worst = std::max(worst, d); }
    printf("  %-20s %-18s queued %.3f done %.3f (slowest copy %.3f)\n", way[change], flag[f], bq, best, worst);
  }
  return 0;
}
