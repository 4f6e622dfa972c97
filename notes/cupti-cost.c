// What CUPTI's activity recording costs each driver call, by what is recorded.
// An experiment for issue 28 (notes/gpu-run-cupti-kinds-one-gpu.log), not
// part of memplan: one process per variant, since CUPTI's state is the
// process's. Loads libcuda and libcupti at run time (no link-time CUDA), so
// it builds here with gcc and the headers of the CUDA 13.0 wheels:
//
//   gcc -O2 -o cupti-cost notes/cupti-cost.c -I<cuda>/include -I<cupti>/include -ldl -lpthread
// (<cuda>: the toolkit `cargo xtask setup` provisions; <cupti>: the
// nvidia-cuda-cupti==13.0.* wheel's nvidia/cu13)
//   for v in off loaded memplan bigbuf device api kernel driver filtered nofunc disabled; do ./cupti-cost $v; done
//   (CUPTI_GLOBAL=1: records in buffers shared by every thread, not one per thread)
//
// Each line: microseconds of host time per call, the median of many rounds
// of (calls, then a stream sync), sync included and divided by the calls.
#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CU(call)                                                            \
    do {                                                                    \
        CUresult r_ = (call);                                               \
        if (r_ != CUDA_SUCCESS) {                                           \
            fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #call, \
                    (int)r_);                                               \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

#define DRIVER(name) static __typeof__(&name) p_##name;
DRIVER(cuInit)
DRIVER(cuDeviceGet)
DRIVER(cuDevicePrimaryCtxRetain)
DRIVER(cuCtxSetCurrent)
DRIVER(cuModuleLoadData)
DRIVER(cuModuleGetFunction)
DRIVER(cuStreamCreate)
DRIVER(cuStreamSynchronize)
DRIVER(cuStreamQuery)
DRIVER(cuLaunchKernel)
DRIVER(cuMemAlloc)
DRIVER(cuMemsetD32Async)
DRIVER(cuMemcpyHtoDAsync)
DRIVER(cuMemAllocHost)

#define CUPTI(name) static __typeof__(&name) q_##name;
CUPTI(cuptiActivityRegisterCallbacks)
CUPTI(cuptiActivityEnable)
CUPTI(cuptiActivityDisable)
CUPTI(cuptiActivityFlushAll)
CUPTI(cuptiActivityEnableDriverApi)
CUPTI(cuptiActivityEnableRuntimeApi)
CUPTI(cuptiActivityPushExternalCorrelationId)
CUPTI(cuptiActivityPopExternalCorrelationId)
CUPTI(cuptiActivityGetNextRecord)
CUPTI(cuptiActivitySetAttribute)

static size_t buffer_bytes = 8 << 10, max_records = 8;
static long buffers, records;

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max) {
    *buffer = malloc(buffer_bytes);
    *size = buffer_bytes;
    *max = max_records;
    __atomic_add_fetch(&buffers, 1, __ATOMIC_RELAXED);
}

static void CUPTIAPI completed(CUcontext c, uint32_t s, uint8_t *buffer, size_t size,
                               size_t valid) {
    (void)c, (void)s, (void)size;
    // Walk the records as memplan does.
    long n = 0;
    CUpti_Activity *record = NULL;
    while (q_cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) n++;
    __atomic_add_fetch(&records, n, __ATOMIC_RELAXED);
    free(buffer);
}

static void *open_first(const char *const *names) {
    for (; *names; names++) {
        void *h = dlopen(*names, RTLD_NOW | RTLD_GLOBAL);
        if (h) return h;
    }
    return NULL;
}

static const char PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry empty() { ret; }\n";

static const uint32_t MEMPLAN_KINDS[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_DRIVER,  CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
static const uint32_t DEVICE_KINDS[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
// The driver calls that queue work memplan times.
static const uint32_t QUEUEING[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync};

static void enable(const uint32_t *kinds, size_t n) {
    for (size_t i = 0; i < n; i++) {
        CUptiResult r = q_cuptiActivityEnable(kinds[i]);
        if (r != CUPTI_SUCCESS) fprintf(stderr, "enable %u -> %d\n", kinds[i], (int)r), exit(1);
    }
}

static void filter(int drivers_on, const uint32_t *on, size_t n) {
    for (uint32_t k = 1; k < CUPTI_DRIVER_TRACE_CBID_SIZE; k++)
        q_cuptiActivityEnableDriverApi(k, drivers_on);
    for (uint32_t k = 1; k < CUPTI_RUNTIME_TRACE_CBID_SIZE; k++)
        q_cuptiActivityEnableRuntimeApi(k, 0);
    for (size_t i = 0; i < n; i++) {
        CUptiResult r = q_cuptiActivityEnableDriverApi(on[i], 1);
        if (r != CUPTI_SUCCESS) fprintf(stderr, "driver api %u -> %d\n", on[i], (int)r), exit(1);
    }
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum Work { LAUNCH, MEMSET, COPY, QUERY };
static CUfunction kernel;
static CUstream stream;
static CUdeviceptr device;
static void *pinned;

static void call(enum Work work) {
    switch (work) {
    case LAUNCH:
        CU(p_cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
        break;
    case MEMSET: CU(p_cuMemsetD32Async(device, 7, 64, stream)); break;
    case COPY: CU(p_cuMemcpyHtoDAsync(device, pinned, 256, stream)); break;
    case QUERY: p_cuStreamQuery(stream); break;
    }
}

// Median microseconds per call of `rounds` rounds of `per` calls and a sync.
static double time_calls(enum Work work, int per, int rounds, int tagged) {
    double *t = malloc(sizeof(double) * rounds);
    for (int r = 0; r < rounds + 20; r++) {
        double start = now_us();
        for (int i = 0; i < per; i++) {
            if (tagged) q_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, r * per + i + 1);
            call(work);
            if (tagged) {
                uint64_t id;
                q_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
            }
        }
        CU(p_cuStreamSynchronize(stream));
        if (r >= 20) t[r - 20] = (now_us() - start) / per;
    }
    qsort(t, rounds, sizeof(double), by_value);
    double m = t[rounds / 2];
    free(t);
    return m;
}

int main(int argc, char **argv) {
    const char *variant = argc > 1 ? argv[1] : "off";
    const char *cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};
    void *cuda = open_first(cuda_names);
    if (!cuda) return fprintf(stderr, "no libcuda\n"), 1;
#define LOAD_DRIVER(name) p_##name = (__typeof__(p_##name))dlsym(cuda, #name);
    LOAD_DRIVER(cuInit) LOAD_DRIVER(cuDeviceGet) LOAD_DRIVER(cuDevicePrimaryCtxRetain)
    LOAD_DRIVER(cuCtxSetCurrent) LOAD_DRIVER(cuModuleLoadData) LOAD_DRIVER(cuModuleGetFunction)
    LOAD_DRIVER(cuStreamSynchronize) LOAD_DRIVER(cuStreamQuery) LOAD_DRIVER(cuLaunchKernel)
    p_cuStreamCreate = (__typeof__(p_cuStreamCreate))dlsym(cuda, "cuStreamCreate");
    p_cuMemAlloc = (__typeof__(p_cuMemAlloc))dlsym(cuda, "cuMemAlloc_v2");
    p_cuMemsetD32Async = (__typeof__(p_cuMemsetD32Async))dlsym(cuda, "cuMemsetD32Async");
    p_cuMemcpyHtoDAsync = (__typeof__(p_cuMemcpyHtoDAsync))dlsym(cuda, "cuMemcpyHtoDAsync_v2");
    p_cuMemAllocHost = (__typeof__(p_cuMemAllocHost))dlsym(cuda, "cuMemAllocHost_v2");

    int with_cupti = strcmp(variant, "off") != 0;
    if (with_cupti) {
        const char *cupti_names[] = {getenv("MEMPLAN_CUPTI") ? getenv("MEMPLAN_CUPTI") : "libcupti.so.13",
                                     "libcupti.so.13", "libcupti.so",
                                     "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
                                     "/usr/local/cuda/lib64/libcupti.so",
                                     "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so", NULL};
        void *cupti = open_first(cupti_names);
        if (!cupti) return fprintf(stderr, "no libcupti\n"), 1;
#define LOAD_CUPTI(name) q_##name = (__typeof__(q_##name))dlsym(cupti, #name);
        LOAD_CUPTI(cuptiActivityRegisterCallbacks) LOAD_CUPTI(cuptiActivityEnable)
        LOAD_CUPTI(cuptiActivityDisable) LOAD_CUPTI(cuptiActivityFlushAll)
        LOAD_CUPTI(cuptiActivityEnableDriverApi) LOAD_CUPTI(cuptiActivityEnableRuntimeApi)
        LOAD_CUPTI(cuptiActivityPushExternalCorrelationId)
        LOAD_CUPTI(cuptiActivityPopExternalCorrelationId)
        LOAD_CUPTI(cuptiActivityGetNextRecord)
        LOAD_CUPTI(cuptiActivitySetAttribute)
        if (!strcmp(variant, "bigbuf")) buffer_bytes = 1 << 20, max_records = 0;
        // CUPTI_GLOBAL=1: buffers shared by every thread, not one per thread.
        if (getenv("CUPTI_GLOBAL")) {
            uint8_t per_thread = 0;
            size_t size = sizeof per_thread;
            CUptiResult r = q_cuptiActivitySetAttribute(
                CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &per_thread);
            if (r != CUPTI_SUCCESS) return fprintf(stderr, "per-thread buffers: %d\n", (int)r), 1;
        }
        q_cuptiActivityRegisterCallbacks(requested, completed);
    }

    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CU(p_cuInit(0));
    CU(p_cuDeviceGet(&dev, 0));
    CU(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(p_cuCtxSetCurrent(ctx));
    CU(p_cuModuleLoadData(&module, PTX));
    CU(p_cuModuleGetFunction(&kernel, module, "empty"));
    CU(p_cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CU(p_cuMemAlloc(&device, 1 << 20));
    CU(p_cuMemAllocHost(&pinned, 1 << 20));

    const size_t n_memplan = sizeof MEMPLAN_KINDS / sizeof *MEMPLAN_KINDS;
    const size_t n_device = sizeof DEVICE_KINDS / sizeof *DEVICE_KINDS;
    const size_t n_queueing = sizeof QUEUEING / sizeof *QUEUEING;
    if (!strcmp(variant, "memplan") || !strcmp(variant, "bigbuf")) {
        enable(MEMPLAN_KINDS, n_memplan);
    } else if (!strcmp(variant, "device")) {
        enable(DEVICE_KINDS, n_device);
    } else if (!strcmp(variant, "api")) {
        const uint32_t k[] = {CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_RUNTIME,
                              CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
        enable(k, 3);
    } else if (!strcmp(variant, "kernel")) {
        const uint32_t k[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
        enable(k, 1);
    } else if (!strcmp(variant, "driver")) {
        const uint32_t k[] = {CUPTI_ACTIVITY_KIND_DRIVER};
        enable(k, 1);
    } else if (!strcmp(variant, "filtered")) {
        // Device kinds and external ids on; API records only of the calls
        // that queue work (the kinds DRIVER and RUNTIME themselves off).
        enable(DEVICE_KINDS, n_device);
        const uint32_t k[] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
        enable(k, 1);
        filter(0, QUEUEING, n_queueing);
    } else if (!strcmp(variant, "nofunc")) {
        // As filtered, but no API records at all.
        enable(DEVICE_KINDS, n_device);
        const uint32_t k[] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
        enable(k, 1);
        filter(0, NULL, 0);
    } else if (!strcmp(variant, "disabled")) {
        // memplan's kinds on, some work, then off again (no forced flush).
        enable(MEMPLAN_KINDS, n_memplan);
        time_calls(LAUNCH, 100, 20, 1);
        for (size_t i = 0; i < n_memplan; i++) q_cuptiActivityDisable(MEMPLAN_KINDS[i]);
        q_cuptiActivityFlushAll(0);
    } else if (strcmp(variant, "off") && strcmp(variant, "loaded")) {
        return fprintf(stderr, "unknown variant %s\n", variant), 2;
    }

    double l1 = time_calls(LAUNCH, 1, 2000, 0);
    double l100 = time_calls(LAUNCH, 100, 200, 0);
    double t100 = with_cupti ? time_calls(LAUNCH, 100, 200, 1) : 0;
    double m100 = time_calls(MEMSET, 100, 200, 0);
    double c100 = time_calls(COPY, 100, 200, 0);
    double q100 = time_calls(QUERY, 100, 200, 0);
    if (with_cupti) q_cuptiActivityFlushAll(1);
    printf("%-9s launch x1 %6.2f  x100 %5.2f  tagged x100 %5.2f  memset %5.2f  copy %5.2f  "
           "query %5.2f us/call; %ld buffers, %ld records\n",
           variant, l1, l100, t100, m100, c100, q100, buffers, records);
    return 0;
}
