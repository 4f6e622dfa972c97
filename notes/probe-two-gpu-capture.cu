// Probe 2 (driver API where memplan uses it): what a two-GPU capture allows.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("  %s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); } } while (0)
#define DK(x) ([&]{ CUresult r = (x); const char *s = ""; cuGetErrorName(r, &s); printf("  %-60.60s -> %s\n", #x, s); return r; }())
__global__ void add(float *p, int n, float v) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v; }
int n = 1 << 16; float *a, *b; cudaStream_t s0, s1; cudaEvent_t fork0, join1; CUcontext c0, c1;
float first(float *p) { float h; cudaMemcpy(&h, p, 4, cudaMemcpyDefault); return h; }
void begin() { cudaSetDevice(0); cudaStreamBeginCapture(s0, cudaStreamCaptureModeThreadLocal); cudaEventRecord(fork0, s0); cudaSetDevice(1); cudaStreamWaitEvent(s1, fork0, 0); }
cudaGraphExec_t end(const char *what) {
  cudaSetDevice(1); cudaEventRecord(join1, s1); cudaSetDevice(0); cudaStreamWaitEvent(s0, join1, 0);
  cudaGraph_t g; cudaError_t e = cudaStreamEndCapture(s0, &g); printf("  end capture (%s): %s\n", what, cudaGetErrorString(e));
  if (e) return 0; cudaGraphExec_t x; e = cudaGraphInstantiateWithFlags(&x, g, 0); printf("  instantiate: %s\n", cudaGetErrorString(e)); return e ? 0 : x;
}
void launch(cudaGraphExec_t x) { cudaSetDevice(0); CK(cudaGraphLaunch(x, s0)); CK(cudaStreamSynchronize(s0)); }
int main() {
  cudaSetDevice(1); cudaMalloc(&b, n * 4); cudaMemset(b, 0, n * 4); cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking); cudaEventCreateWithFlags(&join1, cudaEventDisableTiming); cudaFree(0); cuCtxGetCurrent(&c1);
  cudaSetDevice(0); cudaMalloc(&a, n * 4); cudaMemset(a, 0, n * 4); cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking); cudaEventCreateWithFlags(&fork0, cudaEventDisableTiming); cudaFree(0); cuCtxGetCurrent(&c0);
  cudaDeviceSynchronize();
  printf("A: cuMemcpyPeerAsync under capture\n");
  begin(); DK(cuMemcpyPeerAsync((CUdeviceptr)b, c1, (CUdeviceptr)a, c0, 64, s1)); { cudaGraphExec_t x = end("A"); }
  cudaGetLastError();
  for (int peer = 0; peer < 2; peer++) {
    if (peer) { cudaSetDevice(0); CK(cudaDeviceEnablePeerAccess(1, 0)); cudaSetDevice(1); CK(cudaDeviceEnablePeerAccess(0, 0)); }
    printf("%c: cuMemcpyAsync GPU0 -> GPU1 under capture, peer access %s\n", 'B' + peer, peer ? "on" : "off");
    cudaSetDevice(0); cudaMemset(a, 0, n * 4); add<<<n / 256, 256>>>(a, n, 5.0f); cudaDeviceSynchronize();
    begin(); cuCtxSetCurrent(c1); DK(cuMemcpyAsync((CUdeviceptr)b, (CUdeviceptr)a, n * 4, s1)); cudaGraphExec_t x = end("copy");
    if (x) { launch(x); printf("  b[0] = %g (5)\n", first(b)); }
    cudaGetLastError();
  }
  printf("D: memset on GPU1 in a two-GPU graph, set in place\n");
  begin(); cuCtxSetCurrent(c1); DK(cuMemsetD32Async((CUdeviceptr)b, 0x40000000 /* 2.0f */, n, s1));
  cudaStreamCaptureStatus st; cuuint64_t id; const CUgraphNode *deps; size_t nd; CUgraph gg;
  DK(cuStreamGetCaptureInfo(s1, (CUstreamCaptureStatus *)&st, &id, &gg, &deps, NULL, &nd)); CUgraphNode memset_node = nd ? deps[0] : 0;
  add<<<n / 256, 256, 0, s1>>>(b, n, 1.0f);
  DK(cuStreamGetCaptureInfo(s1, (CUstreamCaptureStatus *)&st, &id, &gg, &deps, NULL, &nd)); CUgraphNode kernel_node = nd ? deps[0] : 0;
  cudaGraphExec_t x = end("memset+kernel");
  if (x) {
    launch(x); printf("  b[0] = %g (3)\n", first(b));
    CUDA_MEMSET_NODE_PARAMS mp; DK(cuGraphMemsetNodeGetParams(memset_node, &mp)); mp.value = 0x40800000; /* 4.0f */
    DK(cuGraphExecMemsetNodeSetParams((CUgraphExec)x, memset_node, &mp, c0));
    launch(x); printf("  set with GPU0's context: b[0] = %g (5 if taken, 3 if not)\n", first(b));
    mp.value = 0x41000000; /* 8.0f */
    DK(cuGraphExecMemsetNodeSetParams((CUgraphExec)x, memset_node, &mp, c1));
    launch(x); printf("  set with GPU1's context: b[0] = %g (9)\n", first(b));
    cudaKernelNodeParams kp; CK(cudaGraphKernelNodeGetParams((cudaGraphNode_t)kernel_node, &kp));
    float v = 100.0f; void *args[] = {&b, &n, &v}; kp.kernelParams = args;
    cudaSetDevice(0); CK(cudaGraphExecKernelNodeSetParams(x, (cudaGraphNode_t)kernel_node, &kp));
    launch(x); printf("  kernel on GPU1 set from GPU0 bound: b[0] = %g (108)\n", first(b));
  }
  printf("E: stream-ordered alloc and free on GPU1 in a two-GPU graph\n");
  begin(); cuCtxSetCurrent(c1); CUdeviceptr t = 0; DK(cuMemAllocAsync(&t, n * 4, s1)); DK(cuMemsetD32Async(t, 0x40000000, n, s1)); DK(cuMemcpyAsync((CUdeviceptr)b, t, n * 4, s1)); DK(cuMemFreeAsync(t, s1));
  x = end("alloc");
  if (x) { launch(x); printf("  b[0] = %g (2)\n", first(b)); launch(x); printf("  again b[0] = %g (2)\n", first(b)); }
  printf("F: capture begun on GPU1's stream, work on GPU0\n");
  printf("done\n");
  return 0;
}
