// Probe: why memplan's value-changing replay of 100 launches finishes
// ~0.045 us a node later, once queued, than small_ops' graph by hand
// changed node by node (notes/gpu-run-changed-steps-only-one-gpu.log).
// Ways that differ between the two, each alone, each in 3 copies on
// streams of their own (fastest shown), blocks in turns:
//   shared:   every node given pointers into one argument array (InPlace)
//   own:      every node given pointers into its own argument block, as
//             memplan keeps each launch's arguments
//   bound:    shared, with the context bound twice before the changes, as
//             a run of a plan with run values binds it
//   memplan:  own and bound
// Per replay: change every kernel node (driver API), launch, wait.
//   nvcc -O2 -arch=sm_90 probe-node-update-styles.cu -lcuda
#include <cstdio>
#include <cstdlib>
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
// Given the larger v2 struct, zeroed past v1's fields, whichever layout the function takes.
typedef CUresult (*SetKernel)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v2 *);
struct alignas(16) Block { int n; float a; const float *x; float *y; char pad[40]; };  // a launch's own arguments, 64 bytes
int main() {
  const int n = 256, K = 100, REPS = 200, BLOCKS = 15, COPIES = 3, WAYS = 5;
  setvbuf(stdout, NULL, _IONBF, 0);
  CU(cuInit(0));
  // The unversioned export memplan and cust call (CUDA_KERNEL_NODE_PARAMS v1).
  void *fp = NULL; cudaDriverEntryPointQueryResult found;
  CK(cudaGetDriverEntryPointByVersion("cuGraphExecKernelNodeSetParams", &fp, 11000, cudaEnableDefault, &found));
  if (!fp) { printf("no cuGraphExecKernelNodeSetParams v1\n"); return 1; }
  SetKernel set_kernel = (SetKernel)fp;
  float *x, *y; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
  CUcontext ctx; CU(cuCtxGetCurrent(&ctx));
  printf("v1 entry point: %p, context %p\n", fp, (void *)ctx);
  cudaStream_t cap; CK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
  CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
  CK(cudaMemsetAsync(x, 0, n * 4, cap)); CK(cudaMemsetAsync(y, 0, n * 4, cap));
  std::vector<CUgraphNode> nodes;
  for (int k = 0; k < K; k++) {
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 256; cfg.stream = cap;
    cudaLaunchAttribute attr[1] = {}; attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr; cfg.numAttrs = 1; CK(cudaLaunchKernelEx(&cfg, saxpy, n, 1.0f, (const float *)x, y));
    cudaStreamCaptureStatus st; const cudaGraphNode_t *deps; size_t nd;
    CK(cudaStreamGetCaptureInfo(cap, &st, NULL, NULL, &deps, NULL, &nd)); nodes.push_back((CUgraphNode)deps[0]);
  }
  cudaGraph_t g; CK(cudaStreamEndCapture(cap, &g));
  printf("captured %zu kernel nodes\n", nodes.size());
  cudaFunction_t rf; CK(cudaGetFuncBySymbol(&rf, (const void *)saxpy));
  cudaGraphExec_t exec[WAYS][COPIES]; cudaStream_t s[WAYS][COPIES];
  std::vector<Block> own[WAYS][COPIES];
  for (int c = 0; c < COPIES; c++) for (int w = 0; w < WAYS; w++) {
    CK(cudaGraphInstantiateWithFlags(&exec[w][c], g, w == 0 ? 0 : 0));
    CK(cudaStreamCreateWithFlags(&s[w][c], cudaStreamNonBlocking));
    own[w][c].assign(K, Block{n, 1.0f, x, y, {}});
  }
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  const char *names[WAYS] = {"unchanged", "shared", "own", "bound", "memplan (own, bound)"};
  printf("%s: 2 memsets + %d kernel nodes, us a node per replay (median of %d blocks of %d; fastest of %d copies)\n", p.name, K, BLOCKS, REPS, COPIES);
  std::vector<double> t[WAYS][COPIES], q[WAYS][COPIES];
  for (int b = 0; b < BLOCKS + 1; b++) for (int w = 0; w < WAYS; w++) for (int c = 0; c < COPIES; c++) {
    double total = 0, queued = 0;
    CUgraphExec e = (CUgraphExec)exec[w][c];
    for (int r = 0; r < REPS; r++) {
      float a = 1.0f + (r & 1); int nn = n; const float *cx = x; float *cy = y;
      double t0 = now();
      if (w == 3 || w == 4) { CU(cuCtxSetCurrent(ctx)); CU(cuCtxSetCurrent(ctx)); }
      if (w == 1 || w == 3) {
        void *params[] = {&nn, &a, &cx, &cy};
        for (int k = 0; k < K; k++) {
          CUDA_KERNEL_NODE_PARAMS_v2 kp = {}; kp.func = (CUfunction)rf; kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1; kp.blockDimX = 256; kp.blockDimY = kp.blockDimZ = 1; kp.kernelParams = params;
          CU(set_kernel(e, nodes[k], &kp));
        }
      } else if (w == 2 || w == 4) {
        for (int k = 0; k < K; k++) {
          Block &blk = own[w][c][k]; blk.a = a;
          void *params[] = {&blk.n, &blk.a, &blk.x, &blk.y};
          CUDA_KERNEL_NODE_PARAMS_v2 kp = {}; kp.func = (CUfunction)rf; kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1; kp.blockDimX = 256; kp.blockDimY = kp.blockDimZ = 1; kp.kernelParams = params;
          CU(set_kernel(e, nodes[k], &kp));
        }
      }
      CK(cudaGraphLaunch(exec[w][c], s[w][c]));
      double t1 = now();
      CK(cudaStreamSynchronize(s[w][c]));
      total += now() - t0; queued += t1 - t0;
    }
    if (b > 0) { t[w][c].push_back(total / REPS / (K + 2)); q[w][c].push_back(queued / REPS / (K + 2)); }
  }
  for (int w = 0; w < WAYS; w++) {
    double best = 1e9, worst = 0, bq = 0;
    for (int c = 0; c < COPIES; c++) { double d = med(t[w][c]); if (d < best) { best = d; bq = med(q[w][c]); } worst = std::max(worst, d); }
    printf("  %-22s queued %.3f done %.3f done-queued %.3f (slowest copy %.3f)\n", names[w], bq, best, best - bq, worst);
  }
  return 0;
}
