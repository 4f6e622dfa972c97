// Probe: what a kernel node's change in place and a launch cost the host,
// by the ways the driver takes arguments. memplan sets a replayed run's
// changed kernel nodes with cuGraphExecKernelNodeSetParams (an array of
// pointers to each argument, `kernelParams`) and launches the same way;
// the driver also takes one packed buffer (`extra`,
// CU_LAUNCH_PARAM_BUFFER_POINTER), and CUDA 12.2's generic
// cuGraphExecNodeSetParams. Each is timed over 100 nodes of a captured
// graph of 100 PDL saxpy launches (the graph idle), then as small_ops
// replays: set every node, launch, wait.
//   nvcc -O2 -arch=sm_90 probe-node-set-cost.cu -o probe-node-set-cost -lcuda
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); exit(1); } } while (0)
#define CU(x) do { CUresult err_ = (x); if (err_ != CUDA_SUCCESS) { const char *s_ = 0; cuGetErrorName(err_, &s_); printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)
__global__ void saxpy(int n, float a, const float *x, float *y) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)n; i += (long long)blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
typedef CUresult (*SetKernel)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
typedef CUresult (*SetNode)(CUgraphExec, CUgraphNode, CUgraphNodeParams *);
// The stub this is linked against lacks the newer symbols: found at run time.
static void *proc(const char *name) {
  void *fp = NULL; cudaDriverEntryPointQueryResult found;
  CK(cudaGetDriverEntryPointByVersion(name, &fp, 12040, cudaEnableDefault, &found));
  if (!fp) { printf("no %s\n", name); exit(1); }
  return fp;
}
struct Args { int n; float a; const float *x; float *y; };  // the kernel's parameter layout (offsets 0, 4, 8, 16)
int main() {
  const int n = 256, K = 100, REPS = 500, BLOCKS = 9;
  CU(cuInit(0));
  SetKernel set_kernel = (SetKernel)proc("cuGraphExecKernelNodeSetParams");
  SetNode set_node = (SetNode)proc("cuGraphExecNodeSetParams");
  float *x, *y; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
  CK(cudaMemset(x, 0, n * 4)); CK(cudaMemset(y, 0, n * 4));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  cudaFunction_t rf; CK(cudaGetFuncBySymbol(&rf, (const void *)saxpy)); CUfunction f = (CUfunction)rf;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  std::vector<CUgraphNode> nodes;
  for (int k = 0; k < K; k++) {
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 256; cfg.stream = s;
    cudaLaunchAttribute attr[1] = {}; attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr; cfg.numAttrs = 1; CK(cudaLaunchKernelEx(&cfg, saxpy, n, 1.0f, (const float *)x, y));
    cudaStreamCaptureStatus st; const cudaGraphNode_t *deps; size_t nd;
    CK(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, &deps, NULL, &nd)); nodes.push_back((CUgraphNode)deps[0]);
  }
  cudaGraph_t g; CK(cudaStreamEndCapture(s, &g)); cudaGraphExec_t re; CK(cudaGraphInstantiate(&re, g, 8)); CUgraphExec e = (CUgraphExec)re;
  CK(cudaGraphUpload(re, s)); CK(cudaStreamSynchronize(s));
  printf("%s: %d kernel nodes, us a node (median of %d blocks of %d)\n", p.name, K, BLOCKS, REPS);
  enum { POINTERS, BUFFER, GENERIC, WAYS };
  const char *names[] = {"kernelParams (memplan's)", "extra, one buffer", "cuGraphExecNodeSetParams"};
  for (int round = 0; round < 2; round++) for (int with_replay = 0; with_replay < 2; with_replay++) for (int way = 0; way < WAYS; way++) {
    std::vector<double> t;
    for (int b = 0; b < BLOCKS; b++) {
      double total = 0;
      for (int r = 0; r < REPS; r++) {
        Args args = {n, 1.0f + (r & 1), x, y};
        double t0 = now();
        for (int k = 0; k < K; k++) {
          if (way == POINTERS) {
            void *params[] = {&args.n, &args.a, &args.x, &args.y};
            CUDA_KERNEL_NODE_PARAMS kp = {}; kp.func = f; kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1; kp.blockDimX = 256; kp.blockDimY = kp.blockDimZ = 1; kp.kernelParams = params;
            CU(set_kernel(e, nodes[k], &kp));
          } else if (way == BUFFER) {
            size_t size = sizeof args;
            void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
            CUDA_KERNEL_NODE_PARAMS kp = {}; kp.func = f; kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1; kp.blockDimX = 256; kp.blockDimY = kp.blockDimZ = 1; kp.extra = extra;
            CU(set_kernel(e, nodes[k], &kp));
          } else {
            void *params[] = {&args.n, &args.a, &args.x, &args.y};
            CUgraphNodeParams np; memset(&np, 0, sizeof np); np.type = CU_GRAPH_NODE_TYPE_KERNEL;
            np.kernel.func = f; np.kernel.gridDimX = np.kernel.gridDimY = np.kernel.gridDimZ = 1; np.kernel.blockDimX = 256; np.kernel.blockDimY = np.kernel.blockDimZ = 1; np.kernel.kernelParams = params;
            CU(set_node(e, nodes[k], &np));
          }
        }
        if (with_replay) { CK(cudaGraphLaunch(re, s)); CK(cudaStreamSynchronize(s)); }
        total += now() - t0;
      }
      t.push_back(total / REPS / K);
    }
    printf("  round %d, %-28s %s %.3f\n", round, names[way], with_replay ? "set all, replay, wait:" : "set all:               ", med(t));
  }
  // Plain launches, queued: kernelParams against one buffer.
  for (int round = 0; round < 2; round++) for (int way = 0; way < 2; way++) {
    std::vector<double> t;
    for (int b = 0; b < BLOCKS; b++) {
      double total = 0;
      for (int r = 0; r < 50; r++) {
        Args args = {n, 1.0f, x, y};
        double t0 = now();
        for (int k = 0; k < K; k++) {
          if (way == 0) { void *params[] = {&args.n, &args.a, &args.x, &args.y}; CU(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, (CUstream)s, params, NULL)); }
          else { size_t size = sizeof args; void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END}; CU(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, (CUstream)s, NULL, extra)); }
        }
        total += now() - t0;
        CK(cudaStreamSynchronize(s));
      }
      t.push_back(total / 50 / K);
    }
    printf("  round %d, cuLaunchKernel by %-18s queued: %.3f us a launch\n", round, way == 0 ? "kernelParams" : "extra, one buffer", med(t));
  }
  return 0;
}
