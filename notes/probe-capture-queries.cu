// Probe: does asking a capture for its last node (cuStreamGetCaptureInfo,
// as memplan's replays do after each op to find the node a run changes in
// place) change the graph it makes? small_ops (H200): a plan's runs
// replayed from such a capture took ~7 us longer a replay of 100 launches
// than the same plan captured by graph(), which asks nothing, whose graph
// ran as fast as the same calls captured by hand.
// Captures two fills and 100 PDL saxpy launches (memplan-kernels' body:
// launch_dependents, then wait) four ways: asking nothing; asking
// cuStreamGetCaptureInfo_v2 (memplan's call) after each op; asking the v3
// form (with edge data) after each op; and asking v2 only after each fill.
// For each: the edges' types (programmatic or full), and the time a replay
// takes, waited for.
//   nvcc -O2 -arch=sm_90 probe-capture-queries.cu -o probe-capture-queries -lcuda
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); exit(1); } } while (0)
#define CU(x) do { CUresult err_ = (x); if (err_ != CUDA_SUCCESS) { const char *s_ = 0; cuGetErrorName(err_, &s_); printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)
extern "C" CUresult cuStreamGetCaptureInfo_v2(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, const CUgraphNode **, size_t *);
__global__ void saxpy(int n, float a, const float *x, float *y) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)n; i += (long long)blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
enum Ask { NOTHING, V2_EACH, V3_EACH, V2_FILLS };
static void ask(cudaStream_t s, Ask how) {
  CUstreamCaptureStatus st; cuuint64_t id; CUgraph g; const CUgraphNode *deps; size_t n;
  cudaStreamCaptureStatus rst; unsigned long long rid; cudaGraph_t rg; const cudaGraphNode_t *rdeps; const cudaGraphEdgeData *edges;
  if (how == V2_EACH || how == V2_FILLS) CU(cuStreamGetCaptureInfo_v2((CUstream)s, &st, &id, &g, &deps, &n));
  else if (how == V3_EACH) CK(cudaStreamGetCaptureInfo(s, &rst, &rid, &rg, &rdeps, &edges, &n));
}
int main() {
  const int n = 256, K = 100, REPS = 2000, BLOCKS = 9;
  float *x, *y; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("%s: 2 fills + %d PDL saxpy captured, median of %d blocks of %d replays waited for\n", p.name, K, BLOCKS, REPS);
  const char *names[] = {"asking nothing", "v2 after each op", "v3 after each op", "v2 after the fills"};
  for (int round = 0; round < 2; round++) for (Ask how : {NOTHING, V2_EACH, V3_EACH, V2_FILLS}) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    CU(cuMemsetD32Async((CUdeviceptr)x, 0x3f800000u, n, (CUstream)s)); ask(s, how);
    CU(cuMemsetD8Async((CUdeviceptr)y, 0, n * 4, (CUstream)s)); ask(s, how);
    for (int k = 0; k < K; k++) {
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 256; cfg.stream = s;
      cudaLaunchAttribute attr[1] = {}; attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; attr[0].val.programmaticStreamSerializationAllowed = 1;
      cfg.attrs = attr; cfg.numAttrs = 1; CK(cudaLaunchKernelEx(&cfg, saxpy, n, 1.0f, (const float *)x, y));
      if (how != V2_FILLS) ask(s, how);
    }
    cudaGraph_t g; CK(cudaStreamEndCapture(s, &g));
    size_t edges = 0; CK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    std::vector<cudaGraphNode_t> from(edges), to(edges); std::vector<cudaGraphEdgeData> data(edges);
    CK(cudaGraphGetEdges(g, from.data(), to.data(), data.data(), &edges));
    int programmatic = 0, full = 0, other = 0;
    for (auto &d : data) { if (d.type == cudaGraphDependencyTypeProgrammatic) programmatic++; else if (d.type == cudaGraphDependencyTypeDefault && d.from_port == 0) full++; else other++; }
    cudaGraphExec_t e; CK(cudaGraphInstantiate(&e, g, 8));
    for (int r = 0; r < 200; r++) CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
    std::vector<double> t;
    for (int b = 0; b < BLOCKS; b++) { double t0 = now(); for (int r = 0; r < REPS; r++) { CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s)); } t.push_back((now() - t0) / REPS / (K + 2)); }
    printf("  round %d, %-20s %3zu edges: %3d programmatic, %3d full, %d other; %.3f us a node\n", round, names[how], edges, programmatic, full, other, med(t));
    CK(cudaGraphExecDestroy(e)); CK(cudaGraphDestroy(g));
  }
  return 0;
}
