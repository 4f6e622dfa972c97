// Does turning CUPTI's activity recording off and on, or collecting its
// records, while other threads call the driver, hang or crash? An experiment for issue 28
// (notes/gpu-run-cupti-kinds-one-gpu.log), not part of memplan. With
// memplan's shape: recording of memplan's seven kinds is turned on by a
// "timer" and off when the last one goes, under a lock of memplan's
// (USERS); CUPTI's buffer callback takes another (STORE); reports flush
// (not forced). Meanwhile workers load and unload modules, page-lock
// memory, capture and replay graphs, make and drop streams and events,
// and launch, each on the GPU's primary context.
//
//   gcc -O2 -g -rdynamic -o cupti-toggle-stress notes/cupti-toggle-stress.c
//       -I<cuda>/include -I<cupti>/include -ldl -lpthread
// (<cuda>: the toolkit `cargo xtask setup` provisions; <cupti>: the
// nvidia-cuda-cupti==13.0.* wheel's nvidia/cu13), with stackscan.py beside it
// for the stacks of a hang.
//   ./cupti-toggle-stress <mode> <seconds> <workers>
//
// forced: off is cuptiActivityDisable of each kind, then
//         cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) (memplan before 02a4bd2)
// plain:  off is the disables, then cuptiActivityFlushAll(0)
// disable: off is the disables alone
// reenable: on whenever the first timer comes, never off
// lefton: turned on once, before any thread starts, never off (memplan since 02a4bd2)
// noflush: as lefton, and timers never flush
// serial: as lefton, with one flush at a time (under a lock of the timers')
// bigbuf: as lefton, with 1 MiB buffers of any number of records (not 8 KiB of 8)
// flusher: as lefton, flushed by a thread of its own every 100 us, never by timers
// guarded: as lefton, with each flush and each destroying call (module unload,
//          stream, event, graph, page-locked memory) excluding each other
//          (flushes take a read-write lock to write, destroying calls to read)
// global: as lefton, with records in buffers shared by every thread
//         (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER 0; CUDA 13's default is
//         a buffer per thread); CUPTI_GLOBAL=1 in the environment shares them in
//         any mode
// period: as lefton, never flushed; one record a buffer, handed back by CUPTI's
//         worker every 1 ms (cuptiActivityFlushPeriod); not run (tried in memplan
//         itself, records never came)
// none: never on (the control: the workers and timers alone)
//
// Prints how many times recording went off and on and each worker's
// rounds; "HANG" and exit 3 if any thread made no progress for 10 s.
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti_activity.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DRIVER(name) static __typeof__(&name) p_##name;
DRIVER(cuInit)
DRIVER(cuDeviceGet)
DRIVER(cuDevicePrimaryCtxRetain)
DRIVER(cuCtxSetCurrent)
DRIVER(cuModuleLoadData)
DRIVER(cuModuleUnload)
DRIVER(cuModuleGetFunction)
DRIVER(cuStreamCreate)
DRIVER(cuStreamDestroy)
DRIVER(cuStreamSynchronize)
DRIVER(cuLaunchKernel)
DRIVER(cuMemAlloc)
DRIVER(cuMemFree)
DRIVER(cuMemsetD32Async)
DRIVER(cuMemHostAlloc)
DRIVER(cuMemFreeHost)
DRIVER(cuEventCreate)
DRIVER(cuEventRecord)
DRIVER(cuEventSynchronize)
DRIVER(cuEventDestroy)
DRIVER(cuStreamBeginCapture)
DRIVER(cuStreamEndCapture)
DRIVER(cuGraphInstantiate)
DRIVER(cuGraphLaunch)
DRIVER(cuGraphExecDestroy)
DRIVER(cuGraphDestroy)

#define CUPTI(name) static __typeof__(&name) q_##name;
CUPTI(cuptiActivityRegisterCallbacks)
CUPTI(cuptiActivityEnable)
CUPTI(cuptiActivityDisable)
CUPTI(cuptiActivityFlushAll)
CUPTI(cuptiActivityFlushPeriod)
CUPTI(cuptiActivitySetAttribute)
CUPTI(cuptiActivityGetNextRecord)
CUPTI(cuptiActivityPushExternalCorrelationId)
CUPTI(cuptiActivityPopExternalCorrelationId)

static pthread_mutex_t users = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t store = PTHREAD_MUTEX_INITIALIZER;
static long stored;

static size_t buffer_bytes = 8 << 10, max_records = 8;

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max) {
    *buffer = malloc(buffer_bytes);
    *size = buffer_bytes;
    *max = max_records;
}

static void CUPTIAPI completed(CUcontext c, uint32_t s, uint8_t *buffer, size_t size,
                               size_t valid) {
    (void)c, (void)s, (void)size;
    long n = 0;
    CUpti_Activity *record = NULL;
    while (q_cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) n++;
    free(buffer);
    pthread_mutex_lock(&store);
    stored += n;
    pthread_mutex_unlock(&store);
}

static const uint32_t KINDS[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_DRIVER,  CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
#define NKINDS (sizeof KINDS / sizeof *KINDS)

static const char PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry empty() { ret; }\n";

static CUcontext context;
static const char *mode;
static volatile int stop;
static long progress[64];
static long toggles;

#define CHECK(call)                                                               \
    do {                                                                          \
        CUresult r_ = (call);                                                     \
        if (r_ != CUDA_SUCCESS) {                                                 \
            fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #call, (int)r_); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

static int once(void) {
    return !strcmp(mode, "lefton") || !strcmp(mode, "noflush") || !strcmp(mode, "serial") ||
           !strcmp(mode, "bigbuf") || !strcmp(mode, "flusher") || !strcmp(mode, "period") ||
           !strcmp(mode, "guarded") || !strcmp(mode, "global");
}

static pthread_mutex_t flushing = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t destroying = PTHREAD_RWLOCK_INITIALIZER;
static int guarded(void) { return !strcmp(mode, "guarded"); }
// A destroying call, excluded from flushes in mode guarded.
#define DESTROY(call)                                          \
    do {                                                       \
        if (guarded()) pthread_rwlock_rdlock(&destroying);     \
        CHECK(call);                                           \
        if (guarded()) pthread_rwlock_unlock(&destroying);     \
    } while (0)

static void flush(void) {
    if (!strcmp(mode, "noflush") || !strcmp(mode, "flusher") || !strcmp(mode, "period")) return;
    int serial = !strcmp(mode, "serial");
    if (serial) pthread_mutex_lock(&flushing);
    if (guarded()) pthread_rwlock_wrlock(&destroying);
    q_cuptiActivityFlushAll(0);
    if (guarded()) pthread_rwlock_unlock(&destroying);
    if (serial) pthread_mutex_unlock(&flushing);
}

// Where a crash happened, before the process goes.
static void crashed(int signal) {
    void *frames[48];
    int n = backtrace(frames, 48);
    dprintf(1, "%s: signal %d in thread %ld; frames:\n", mode, signal, (long)gettid());
    backtrace_symbols_fd(frames, n, 1);
    Dl_info info;
    for (int i = 0; i < n; i++)
        if (dladdr(frames[i], &info) && info.dli_fname)
            dprintf(1, "  %s+0x%lx\n", info.dli_fname,
                    (unsigned long)((char *)frames[i] - (char *)info.dli_fbase));
    _exit(128 + signal);
}

static void on(void) {
    if (once() || !strcmp(mode, "none")) return;
    for (size_t i = 0; i < NKINDS; i++) q_cuptiActivityEnable(KINDS[i]);
}

static void off(void) {
    if (once() || !strcmp(mode, "reenable") || !strcmp(mode, "none")) return;
    for (size_t i = 0; i < NKINDS; i++) q_cuptiActivityDisable(KINDS[i]);
    if (!strcmp(mode, "forced")) q_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (!strcmp(mode, "plain")) q_cuptiActivityFlushAll(0);
}

// A timer's life: on (first user), a run tagged with ids, a report's
// flush, off (last user).
static void *timer(void *arg) {
    long me = (long)arg;
    CHECK(p_cuCtxSetCurrent(context));
    CUmodule module;
    CUfunction kernel;
    CUstream stream;
    CHECK(p_cuModuleLoadData(&module, PTX));
    CHECK(p_cuModuleGetFunction(&kernel, module, "empty"));
    CHECK(p_cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    static int count;
    unsigned seed = (unsigned)me;
    while (!stop) {
        pthread_mutex_lock(&users);
        if (count++ == 0) on();
        pthread_mutex_unlock(&users);
        for (int i = 0; i < 4; i++) {
            q_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, i + 1);
            CHECK(p_cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
            uint64_t id;
            q_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
        }
        CHECK(p_cuStreamSynchronize(stream));
        flush();
        usleep(rand_r(&seed) % 300);
        pthread_mutex_lock(&users);
        if (--count == 0) {
            off();
            __atomic_add_fetch(&toggles, 1, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&users);
        progress[me]++;
        usleep(rand_r(&seed) % 300);
    }
    return NULL;
}

static void *flusher(void *arg) {
    (void)arg;
    while (!stop) {
        q_cuptiActivityFlushAll(0);
        usleep(100);
    }
    return NULL;
}

static void *worker(void *arg) {
    long me = (long)arg;
    CHECK(p_cuCtxSetCurrent(context));
    CUstream stream;
    CUdeviceptr device;
    CHECK(p_cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(p_cuMemAlloc(&device, 1 << 16));
    while (!stop) {
        switch ((me + progress[me]) % 5) {
        case 0: {  // a module in and out
            CUmodule module;
            CUfunction kernel;
            CHECK(p_cuModuleLoadData(&module, PTX));
            CHECK(p_cuModuleGetFunction(&kernel, module, "empty"));
            CHECK(p_cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
            CHECK(p_cuStreamSynchronize(stream));
            DESTROY(p_cuModuleUnload(module));
            break;
        }
        case 1: {  // page-locked memory
            void *host;
            CHECK(p_cuMemHostAlloc(&host, 1 << 20, 0));
            DESTROY(p_cuMemFreeHost(host));
            break;
        }
        case 2: {  // a graph captured, replayed, dropped
            CUgraph graph;
            CUgraphExec exec;
            CHECK(p_cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
            CHECK(p_cuMemsetD32Async(device, 1, 1024, stream));
            CHECK(p_cuStreamEndCapture(stream, &graph));
            CHECK(p_cuGraphInstantiate(&exec, graph, 0));
            CHECK(p_cuGraphLaunch(exec, stream));
            CHECK(p_cuStreamSynchronize(stream));
            DESTROY(p_cuGraphExecDestroy(exec));
            DESTROY(p_cuGraphDestroy(graph));
            break;
        }
        case 3: {  // streams and events made and dropped
            CUstream s;
            CUevent e;
            CHECK(p_cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
            CHECK(p_cuEventCreate(&e, 0));
            CHECK(p_cuMemsetD32Async(device, 2, 1024, s));
            CHECK(p_cuEventRecord(e, s));
            CHECK(p_cuEventSynchronize(e));
            DESTROY(p_cuEventDestroy(e));
            DESTROY(p_cuStreamDestroy(s));
            break;
        }
        case 4:  // plain work
            for (int i = 0; i < 8; i++) CHECK(p_cuMemsetD32Async(device, 3, 1024, stream));
            CHECK(p_cuStreamSynchronize(stream));
            break;
        }
        progress[me]++;
    }
    return NULL;
}

static void *open_first(const char *const *names) {
    for (; *names; names++) {
        void *h = dlopen(*names, RTLD_NOW | RTLD_GLOBAL);
        if (h) return h;
    }
    return NULL;
}

int main(int argc, char **argv) {
    mode = argc > 1 ? argv[1] : "forced";
    int seconds = argc > 2 ? atoi(argv[2]) : 30;
    int workers = argc > 3 ? atoi(argv[3]) : 12;
    int timers = 4;
    if (workers + timers > 64) workers = 64 - timers;
    const char *cuda_names[] = {"libcuda.so.1", NULL};
    const char *cupti_names[] = {"libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so",
                                 "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", NULL};
    void *cuda = open_first(cuda_names), *cupti = open_first(cupti_names);
    if (!cuda || !cupti) return fprintf(stderr, "no libcuda or libcupti\n"), 1;
#define D(name, symbol) p_##name = (__typeof__(p_##name))dlsym(cuda, symbol);
    D(cuInit, "cuInit") D(cuDeviceGet, "cuDeviceGet")
    D(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") D(cuCtxSetCurrent, "cuCtxSetCurrent")
    D(cuModuleLoadData, "cuModuleLoadData") D(cuModuleUnload, "cuModuleUnload")
    D(cuModuleGetFunction, "cuModuleGetFunction") D(cuStreamCreate, "cuStreamCreate")
    D(cuStreamDestroy, "cuStreamDestroy_v2") D(cuStreamSynchronize, "cuStreamSynchronize")
    D(cuLaunchKernel, "cuLaunchKernel") D(cuMemAlloc, "cuMemAlloc_v2") D(cuMemFree, "cuMemFree_v2")
    D(cuMemsetD32Async, "cuMemsetD32Async") D(cuMemHostAlloc, "cuMemHostAlloc")
    D(cuMemFreeHost, "cuMemFreeHost") D(cuEventCreate, "cuEventCreate")
    D(cuEventRecord, "cuEventRecord") D(cuEventSynchronize, "cuEventSynchronize")
    D(cuEventDestroy, "cuEventDestroy_v2") D(cuStreamBeginCapture, "cuStreamBeginCapture_v2")
    D(cuStreamEndCapture, "cuStreamEndCapture") D(cuGraphInstantiate, "cuGraphInstantiateWithFlags")
    D(cuGraphLaunch, "cuGraphLaunch") D(cuGraphExecDestroy, "cuGraphExecDestroy")
    D(cuGraphDestroy, "cuGraphDestroy")
#define Q(name) q_##name = (__typeof__(q_##name))dlsym(cupti, #name);
    Q(cuptiActivityRegisterCallbacks) Q(cuptiActivityEnable) Q(cuptiActivityDisable)
    Q(cuptiActivityFlushAll) Q(cuptiActivityFlushPeriod) Q(cuptiActivityGetNextRecord)
    Q(cuptiActivitySetAttribute)
    Q(cuptiActivityPushExternalCorrelationId) Q(cuptiActivityPopExternalCorrelationId)

    if (!strcmp(mode, "bigbuf")) buffer_bytes = 1 << 20, max_records = 0;
    if (!strcmp(mode, "period")) {
        buffer_bytes = 1 << 10, max_records = 1;
        q_cuptiActivityFlushPeriod(1);
    }
    if (!strcmp(mode, "global") || getenv("CUPTI_GLOBAL")) {
        uint8_t per_thread = 0;
        size_t size = sizeof per_thread;
        CUptiResult r = q_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER,
                                                    &size, &per_thread);
        if (r != CUPTI_SUCCESS) return fprintf(stderr, "per-thread buffers: %d\n", (int)r), 1;
    }
    signal(SIGSEGV, crashed);
    signal(SIGABRT, crashed);
    q_cuptiActivityRegisterCallbacks(requested, completed);
    CUdevice dev;
    CHECK(p_cuInit(0));
    CHECK(p_cuDeviceGet(&dev, 0));
    CHECK(p_cuDevicePrimaryCtxRetain(&context, dev));
    if (once())
        for (size_t i = 0; i < NKINDS; i++) q_cuptiActivityEnable(KINDS[i]);

    pthread_t threads[64];
    int n = timers + workers;
    for (long i = 0; i < n; i++)
        pthread_create(&threads[i], NULL, i < timers ? timer : worker, (void *)i);
    pthread_t flushing_thread;
    if (!strcmp(mode, "flusher")) pthread_create(&flushing_thread, NULL, flusher, NULL);
    long last[64] = {0};
    int still[64] = {0};
    for (int s = 0; s < seconds; s++) {
        sleep(1);
        for (int i = 0; i < n; i++) {
            long p = __atomic_load_n(&progress[i], __ATOMIC_RELAXED);
            still[i] = p == last[i] ? still[i] + 1 : 0;
            last[i] = p;
            if (still[i] >= 10) {
                printf("%-8s HANG: thread %d (%s) made no progress for 10 s, after %ld offs\n", mode,
                       i, i < timers ? "timer" : "worker", toggles);
                fflush(stdout);
                char scan[64];
                snprintf(scan, sizeof scan, "python3 stackscan.py %d", (int)getpid());
                if (system(scan) != 0) printf("(no stack scan)\n");
                _exit(3);
            }
        }
    }
    stop = 1;
    for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
    if (!strcmp(mode, "flusher")) pthread_join(flushing_thread, NULL);
    long rounds = 0;
    for (int i = timers; i < n; i++) rounds += progress[i];
    printf("%-8s %d s: %ld offs, %ld worker rounds, %ld records; no hang\n", mode, seconds,
           toggles, rounds, stored);
    return 0;
}
