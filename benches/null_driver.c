/* A CUDA driver that does nothing, quickly, for profiling memplan's own
 * host cost without a GPU: every call succeeds, and the calls that give
 * something give something plausible (one GPU, made-up handles and device
 * addresses, real host memory). Never for results.
 *
 * `cargo xtask host-cost [launches...]` builds it and runs
 * `small_ops --host-only` against it, printing the command (to put under
 * `perf record -g`). By hand: on the driver stub's list of functions
 * (`cargo xtask setup` writes .cuda/libcuda_stub.c), each answering success
 * unless defined here:
 *
 *   grep -o '^int cu[A-Za-z0-9_]*' benches/null_driver.c | cut -c5- | sort -u > /tmp/defined
 *   grep -o '^int cu[A-Za-z0-9_]*' .cuda/libcuda_stub.c | cut -c5- | sort -u \
 *     | comm -23 - /tmp/defined | sed 's/^/int /; s/$/(void) { return 0; }/' > /tmp/rest.c
 *   mkdir -p target/null-driver
 *   cat benches/null_driver.c /tmp/rest.c | gcc -O2 -shared -fPIC -w -x c - \
 *     -Wl,-soname,libcuda.so.1 -o target/null-driver/libcuda.so.1
 *   bin=$(cargo bench --no-run --bench small_ops 2>&1 | sed -n 's/.*Executable.*(\(.*\))/\1/p')
 *   LD_LIBRARY_PATH=target/null-driver "$bin" --host-only 1
 *
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t dptr;
static uintptr_t next_handle = 0x1000;
static dptr next_device = 0x7f0000000000ull;
static void *handle(void) { next_handle += 16; return (void *)next_handle; }
int cuInit(unsigned f) { return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *c) { *c = 1; return 0; }
int cuDeviceGet(int *d, int o) { *d = o; return 0; }
int cuDeviceGetAttribute(int *pi, int attr, int dev) {
  switch (attr) {
    case 1: *pi = 1024; break;            /* max threads per block */
    case 2: *pi = 1024; break; case 3: *pi = 1024; break; case 4: *pi = 64; break; /* block dims */
    case 5: *pi = 2147483647; break; case 6: *pi = 65535; break; case 7: *pi = 65535; break; /* grid dims */
    case 8: *pi = 49152; break;           /* shared per block */
    case 75: *pi = 9; break; case 76: *pi = 0; break; /* compute capability */
    case 97: *pi = 232448; break;         /* shared per block opt-in */
    default: *pi = 1; break;
  }
  return 0;
}
int cuDeviceGetName(char *name, int len, int dev) { strncpy(name, "a driver that does nothing", len); if (len) name[len - 1] = 0; return 0; }
int cuDeviceTotalMem_v2(size_t *b, int dev) { *b = 80ull << 30; return 0; }
int cuDevicePrimaryCtxRetain(void **c, int dev) { *c = (void *)(uintptr_t)(0x100 + 16 * dev); return 0; }
int cuCtxGetCurrent(void **c) { *c = (void *)0x100; return 0; }
int cuCtxPopCurrent_v2(void **c) { if (c) *c = (void *)0x100; return 0; }
int cuCtxGetStreamPriorityRange(int *least, int *greatest) { if (least) *least = 0; if (greatest) *greatest = -5; return 0; }
int cuStreamCreateWithPriority(void **s, unsigned f, int p) { *s = handle(); return 0; }
int cuStreamCreate(void **s, unsigned f) { *s = handle(); return 0; }
int cuStreamGetPriority(void *s, int *p) { *p = 0; return 0; }
int cuEventCreate(void **e, unsigned f) { *e = handle(); return 0; }
int cuEventElapsedTime(float *ms, void *a, void *b) { *ms = 0; return 0; }
int cuModuleLoadData(void **m, const void *image) { *m = handle(); return 0; }
int cuModuleGetFunction(void **f, void *m, const char *name) { *f = handle(); return 0; }
int cuFuncGetAttribute(int *pi, int attr, void *f) {
  switch (attr) { case 0: *pi = 1024; break; case 8: *pi = 49152; break; case 5: case 6: *pi = 90; break; default: *pi = 0; }
  return 0;
}
int cuMemAlloc_v2(dptr *d, size_t bytes) { next_device = (next_device + 255) & ~255ull; *d = next_device; next_device += bytes ? bytes : 1; return 0; }
int cuMemAllocAsync(dptr *d, size_t bytes, void *s) { return cuMemAlloc_v2(d, bytes); }
static void *host(size_t bytes) { void *p = NULL; if (posix_memalign(&p, 4096, bytes ? bytes : 1)) return NULL; return p; }
int cuMemAllocHost_v2(void **p, size_t bytes) { *p = host(bytes); return *p ? 0 : 2; }
int cuMemHostAlloc(void **p, size_t bytes, unsigned f) { *p = host(bytes); return *p ? 0 : 2; }
int cuMemFreeHost(void *p) { free(p); return 0; }
int cuMemHostGetDevicePointer_v2(dptr *d, void *p, unsigned f) { *d = (dptr)(uintptr_t)p; return 0; }
int cuGetErrorName(int e, const char **s) { *s = "CUDA_ERROR_FAKE"; return 0; }
int cuGetErrorString(int e, const char **s) { *s = "an error of the driver that does nothing"; return 0; }
int cuGetProcAddress(const char *sym, void **f, int v, unsigned long long flags) { *f = NULL; return 500; }
int cuGetProcAddress_v2(const char *sym, void **f, int v, unsigned long long flags, void *status) { *f = NULL; return 500; }
/* Stream capture, enough for a plan replayed as a graph (`small_ops
 * --host-only` replays some): the node a launch, memset or copy became is
 * the one cuStreamGetCaptureInfo_v2 names after it, and cuGraphNodeGetType
 * tells its kind (CU_GRAPH_NODE_TYPE_KERNEL 0, MEMCPY 1, MEMSET 2). Every
 * call still does nothing; graphs, execs and their launches are the stub's
 * successes. */
static unsigned last_kind;
static void *last_node;
static unsigned char node_kinds[1 << 16];
static unsigned char *kind_of(void *node) { return &node_kinds[((uintptr_t)node >> 4) & 0xffff]; }
int cuLaunchKernel(void) { last_kind = 0; return 0; }
int cuMemcpyHtoDAsync_v2(void) { last_kind = 1; return 0; }
int cuMemcpyDtoHAsync_v2(void) { last_kind = 1; return 0; }
int cuMemcpyDtoDAsync_v2(void) { last_kind = 1; return 0; }
int cuMemcpyAsync(void) { last_kind = 1; return 0; }
int cuMemsetD8Async(void) { last_kind = 2; return 0; }
int cuMemsetD16Async(void) { last_kind = 2; return 0; }
int cuMemsetD32Async(void) { last_kind = 2; return 0; }
int cuStreamGetCaptureInfo_v2(void *s, int *status, unsigned long long *id, void **graph, void *const **nodes, size_t *count) {
  last_node = handle(); *kind_of(last_node) = last_kind;
  *status = 1; *id = 1; *graph = (void *)0x200; *nodes = &last_node; *count = 1;
  return 0;
}
int cuGraphNodeGetType(void *node, unsigned *type) { *type = *kind_of(node); return 0; }
