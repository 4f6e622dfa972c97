// Probe: a changed run value reaching 100 kernel nodes of a graph through
// device-side node updates (CUDA 12.4+), against setting each node from the
// host (cudaGraphExecKernelNodeSetParams), and the graph unchanged.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void saxpy(int n, float a, const float *x, float *y) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
__global__ void fill(float *p, int n, float v) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
// Writes *value (mapped host memory) into parameter `a` of every node.
__global__ void updater(const float *value, const cudaGraphDeviceNode_t *nodes, int count, size_t offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) { float a = *(volatile const float *)value; cudaGraphKernelNodeSetParam(nodes[i], offset, &a, sizeof a); }
}
int main() {
  const int K = 100, n = 256, REPS = 2000;
  float *x, *y; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
  float *value; CK(cudaHostAlloc(&value, 4, cudaHostAllocMapped)); *value = 1.0f;
  float *dvalue; CK(cudaHostGetDevicePointer(&dvalue, value, 0));
  cudaGraphDeviceNode_t *dnodes; CK(cudaMalloc(&dnodes, K * sizeof(cudaGraphDeviceNode_t)));
  size_t offset, size; CK(cudaFuncGetParamInfo((void *)saxpy, 1, &offset, &size)); printf("param a: offset %zu size %zu\n", offset, size);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Graph A: fills + K saxpy, plain (host updates each node).
  // Graph B: fills + updater + K device-updatable saxpy.
  std::vector<cudaGraphNode_t> plain(K);
  std::vector<cudaGraphDeviceNode_t> devnodes(K);
  cudaGraph_t ga, gb; cudaGraphExec_t xa, xb;
  for (int which = 0; which < 2; which++) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    fill<<<1, 256, 0, s>>>(x, n, 1.0f); fill<<<1, 256, 0, s>>>(y, n, 0.0f);
    if (which == 1) updater<<<1, 128, 0, s>>>(dvalue, dnodes, K, offset);
    for (int k = 0; k < K; k++) {
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 256; cfg.stream = s;
      cudaLaunchAttribute attr[1] = {}; attr[0].id = cudaLaunchAttributeDeviceUpdatableKernelNode; attr[0].val.deviceUpdatableKernelNode.deviceUpdatable = 1;
      cfg.attrs = attr; cfg.numAttrs = which == 1 ? 1 : 0;
      { cudaError_t e = cudaLaunchKernelEx(&cfg, saxpy, n, 1.0f, (const float *)x, y);
        if (e != cudaSuccess) { printf("graph %d launch %d: %s\n", which, k, cudaGetErrorString(e)); break; } }
      if (which == 1) devnodes[k] = attr[0].val.deviceUpdatableKernelNode.devNode;
      cudaStreamCaptureStatus st; const cudaGraphNode_t *deps; size_t nd;
      CK(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, &deps, NULL, &nd));
      if (which == 0) plain[k] = deps[0];
    }
    { cudaGraph_t g; cudaError_t e = cudaStreamEndCapture(s, &g); printf("graph %d end capture: %s\n", which, cudaGetErrorString(e)); if (e) return 1; if (which) gb = g; else ga = g; }
    CK(cudaGraphInstantiate(which ? &xb : &xa, which ? gb : ga, 0));
  }
  CK(cudaMemcpy(dnodes, devnodes.data(), K * sizeof(cudaGraphDeviceNode_t), cudaMemcpyHostToDevice));
  cudaKernelNodeParams kp; CK(cudaGraphKernelNodeGetParams(plain[0], &kp));
  // Correctness over many replays, each with a new value: y = K * a.
  if (getenv("UPLOAD")) CK(cudaGraphUpload(xb, s));
  int wrong = 0, first_wrong = -1;
  for (int r = 0; r < 500; r++) {
    float a = 2.0f + r;
    *value = a; CK(cudaGraphLaunch(xb, s)); CK(cudaStreamSynchronize(s));
    float h; CK(cudaMemcpy(&h, y, 4, cudaMemcpyDeviceToHost));
    if (h != K * a) { wrong++; if (first_wrong < 0) first_wrong = r; if (wrong < 4) printf("replay %d, a=%g: y[0] = %g (expected %g)\n", r, a, h, K * a); }
  }
  printf("device-updated replays wrong: %d of 500 (first %d)\n", wrong, first_wrong);
  // Back to back, no host sync between: launch U-style (value changes while in flight is not allowed; so only check end)
  auto now = [] { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; };
  double tot[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
  for (int r = 0; r < REPS; r++) {
    for (int way = 0; way < 4; way++) {
      float a = 1.0f + (r % 2);
      double t0 = now();
      if (way == 0) CK(cudaGraphLaunch(xa, s));                       // plain, unchanged
      if (way == 1) {                                                  // plain, each node set from the host
        int ni = n; const float *xc = x; void *args[] = {&ni, &a, &xc, &y};
        kp.kernelParams = args;
        for (int k = 0; k < K; k++) CK(cudaGraphExecKernelNodeSetParams(xa, plain[k], &kp));
        CK(cudaGraphLaunch(xa, s));
      }
      if (way == 2) { CK(cudaGraphLaunch(xb, s)); }                    // updater, unchanged value
      if (way == 3) { *value = a; CK(cudaGraphLaunch(xb, s)); }        // updater, value changes
      double t1 = now();
      CK(cudaStreamSynchronize(s));
      double t2 = now();
      if (r >= 10) { q[way] += t1 - t0; tot[way] += t2 - t0; }
    }
  }
  const char *names[] = {"plain graph, unchanged", "plain graph, each node set by host", "updater graph, unchanged", "updater graph, value changes"};
  for (int w = 0; w < 4; w++) printf("%-38s queued %7.2f us  done %7.2f us  (%5.3fx plain unchanged)\n", names[w], q[w] / (REPS - 10), tot[w] / (REPS - 10), tot[w] / tot[0]);
  return 0;
}
