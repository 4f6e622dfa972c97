//! NVIDIA's CUPTI activity API, loaded at run time when a plan is timed:
//! when each copy and kernel started and ended on the device, rather than
//! when its stream reached it (what events measure). Nothing here is
//! loaded, and no call is made, unless a plan asks for timing; where CUPTI
//! cannot be loaded or started, timing falls back to events and says why.
//!
//! How an op is found among CUPTI's records: memplan pushes an id of its
//! own around the driver call that queues the op; CUPTI writes a record
//! tying that id to the call's correlation id, and the record of the copy
//! or kernel carries the same correlation id (see `store.rs`).
//!
//! CUPTI has one set of buffer callbacks per process: memplan assumes it
//! is the only client (beside another, such as a profiler library, time
//! by events). It turns activity recording on for the first plan timed,
//! and leaves it on for the rest of the process (see `ENABLED`).
//!
//! Getting the records out: CUPTI hands a buffer back when every record in
//! it is complete, or at once when flushed by force; then a record of work
//! not yet complete (still running, or its times not yet read, which
//! happens after a stream's sync too) comes without times and is lost for
//! good. So a report never forces: it asks for the complete buffers until
//! its records are in. Small buffers (`RECORDS_PER_BUFFER`) keep a run's
//! records from sharing one with much of the next run's, which would make
//! it wait for that run.

mod records;
mod store;

pub(crate) use records::Span;
pub(crate) use store::Wanted;

use crate::dynamic;
use libloading::Library;
use records::EXTERNAL_KIND;
use std::ffi::{CStr, c_char, c_void};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use store::Store;

type Status = u32;
const SUCCESS: Status = 0;
/// Each buffer handed to CUPTI (it asks for more as they fill): room for
/// `RECORDS_PER_BUFFER` of the largest record memplan enables (216 bytes).
const BUFFER_BYTES: usize = 8 << 10;
const RECORDS_PER_BUFFER: usize = 8;
/// How long a report waits for its records (a buffer it shares with
/// another run's records waits for those); after that, its ops still
/// without one are counted as such. On a fresh machine's first timed runs
/// a record is sometimes missing: waiting 2 s instead did not bring it
/// (`notes/gpu-run-replay-values-one-gpu.log`), so it is lost, not late.
const PATIENCE: Duration = Duration::from_millis(250);

/// What memplan records: copies (between GPUs too), fills, kernels
/// (without serializing them, as `KIND_KERNEL` would), the API calls
/// whose records carry memplan's ids, and those ids. An id is tied only to
/// the calls of a kind that is recorded: memplan calls the driver, and
/// NCCL the driver or, for some work, CUDA's runtime.
const KINDS: [(u32, &str); 7] = [
    (records::KIND_MEMCPY, "MEMCPY"),
    (records::KIND_MEMCPY2, "MEMCPY2"),
    (records::KIND_MEMSET, "MEMSET"),
    (records::KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"),
    (records::KIND_DRIVER, "DRIVER"),
    (records::KIND_RUNTIME, "RUNTIME"),
    (records::KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"),
];

/// `CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER` (CUPTI 13's
/// `CUpti_ActivityAttribute`): whether each thread has buffers of its own.
const PER_THREAD_ACTIVITY_BUFFER: u32 = 9;

type Requested = unsafe extern "C" fn(*mut *mut u8, *mut usize, *mut usize);
type Completed = unsafe extern "C" fn(*mut c_void, u32, *mut u8, usize, usize);

/// The CUPTI functions memplan calls, and the library that keeps them
/// valid (never unloaded: CUPTI calls back into this process).
struct Api {
    _library: Library,
    result_string: unsafe extern "C" fn(Status, *mut *const c_char) -> Status,
    enable: unsafe extern "C" fn(u32) -> Status,
    disable: unsafe extern "C" fn(u32) -> Status,
    set_attribute: unsafe extern "C" fn(u32, *mut usize, *mut c_void) -> Status,
    flush_all: unsafe extern "C" fn(u32) -> Status,
    next_record: unsafe extern "C" fn(*mut u8, usize, *mut *mut u8) -> Status,
    push: unsafe extern "C" fn(u32, u64) -> Status,
    pop: unsafe extern "C" fn(u32, *mut u64) -> Status,
    timestamp: unsafe extern "C" fn(*mut u64) -> Status,
}

static API: OnceLock<Result<Api, String>> = OnceLock::new();
/// What the records say so far.
static STORE: LazyLock<Mutex<Store>> = LazyLock::new(Mutex::default);
/// Whether activity recording is on: turned on by the first timer, and
/// left on for the rest of the process. Turned off whenever no plan was
/// timed and on again for the next, it deadlocked a process of 16 test
/// threads inside libcuda and libcupti (one thread turning it off, others
/// loading modules, ending captures, page-locking memory;
/// `notes/gpu-run-cupti-deadlock-one-gpu.log`). NVIDIA's libraries alone
/// do the same, however recording is turned off and on again, and turning
/// it on again while it was on hung too (`notes/cupti-toggle-stress.c`,
/// `notes/gpu-run-cupti-kinds-one-gpu.log`); whether the one turning-on
/// memplan makes can hang beside busy threads was not tested alone. The
/// docs of `set_timing` say when to time by events. Left on, what costs is
/// recording the work itself (with per-thread buffers, a fill 1.6 -> 3.5 us
/// to queue).
static ENABLED: OnceLock<Result<(), String>> = OnceLock::new();
/// The next op id to hand out (0 is never one).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A timer's hold on CUPTI's records (recording, once on, stays on: see
/// `ENABLED`); each times one run at a time.
pub(crate) struct Tracing {
    api: &'static Api,
    /// The ids of the run whose records are awaited.
    run: Option<Range<u64>>,
}

impl Tracing {
    /// Loads CUPTI (once per process) and turns activity recording on;
    /// the error says why it cannot, for the report.
    pub fn start() -> Result<Tracing, String> {
        let api = API.get_or_init(load).as_ref().map_err(Clone::clone)?;
        ENABLED.get_or_init(|| enable(api)).clone()?;
        Ok(Tracing { api, run: None })
    }

    /// Fresh ids for a run of `count` ops, whose records are awaited from
    /// now until [`take`](Self::take). A run before it that was never
    /// taken (it failed) is forgotten.
    pub fn begin_run(&mut self, count: usize) -> Range<u64> {
        // At least one id, so that no two runs start at the same one.
        let start = NEXT_ID.fetch_add(count.max(1) as u64, Ordering::Relaxed);
        let ids = start..start + count as u64;
        let mut store = lock(&STORE);
        if let Some(old) = self.run.replace(ids.clone()) {
            store.end_run(old, &[]);
        }
        store.begin_run(ids.clone());
        ids
    }

    /// CUPTI's clock now, in nanoseconds: the clock of every span.
    pub fn now(&self) -> u64 {
        let mut ns = 0;
        // SAFETY: writes one u64.
        unsafe { (self.api.timestamp)(&mut ns) };
        ns
    }

    /// Driver calls of this thread until [`leave`](Self::leave) carry `id`.
    #[inline]
    pub fn enter(&self, id: u64) {
        // SAFETY: a CUPTI function; a failure leaves the op unrecorded,
        // which its report counts.
        unsafe { (self.api.push)(EXTERNAL_KIND, id) };
    }

    #[inline]
    pub fn leave(&self) {
        let mut id = 0;
        // SAFETY: writes one u64.
        unsafe { (self.api.pop)(EXTERNAL_KIND, &mut id) };
    }

    /// The spans of the run's ops, each timed as `wanted` (`None` for an
    /// op not wanted, or no record came for), once every one awaited has
    /// its span or patience runs out; their work has finished. Not
    /// `patient`, one look (the run failed, and its records may never
    /// complete). With them, what went wrong, if anything.
    pub fn take(
        &mut self,
        wanted: &[Option<Wanted>],
        patient: bool,
    ) -> (Vec<Option<Span>>, Option<String>) {
        let Some(ids) = self.run.take() else {
            return (Vec::new(), None);
        };
        let since = Instant::now();
        let status = loop {
            // SAFETY: a CUPTI function; it calls `completed` for each
            // buffer whose records are complete before returning.
            let status = unsafe { (self.api.flush_all)(0) };
            if status != SUCCESS
                || lock(&STORE).has_all(wanted)
                || !patient
                || since.elapsed() > PATIENCE
            {
                break status;
            }
            std::thread::sleep(Duration::from_micros(20));
        };
        let spans = lock(&STORE).end_run(ids, wanted);
        let problem = (status != SUCCESS).then(|| {
            format!(
                "cuptiActivityFlushAll failed: {}",
                self.api.describe(status)
            )
        });
        (spans, problem)
    }
}

impl Drop for Tracing {
    fn drop(&mut self) {
        if let Some(ids) = self.run.take() {
            lock(&STORE).end_run(ids, &[]);
        }
    }
}

/// Turns recording of every kind memplan reads on, or none.
fn enable(api: &Api) -> Result<(), String> {
    for (done, &(kind, name)) in KINDS.iter().enumerate() {
        // SAFETY: a CUPTI function with a valid kind.
        let status = unsafe { (api.enable)(kind) };
        if status != SUCCESS {
            for &(kind, _) in &KINDS[..done] {
                // SAFETY: as above.
                unsafe { (api.disable)(kind) };
            }
            return Err(format!(
                "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_{name}) failed: {}; \
                 not tried again in this process",
                api.describe(status)
            ));
        }
    }
    Ok(())
}

impl Api {
    fn describe(&self, status: Status) -> String {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: CUPTI writes a pointer to a static string, or nothing.
        let found = unsafe { (self.result_string)(status, &mut text) } == SUCCESS;
        if found && !text.is_null() {
            // SAFETY: a NUL-terminated static string from CUPTI.
            let name = unsafe { CStr::from_ptr(text) }.to_string_lossy();
            format!("{name} ({status})")
        } else {
            format!("CUPTI error {status}")
        }
    }
}

/// A poisoned lock's data is still whole here (no update panics midway).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Where CUPTI may be (unless `MEMPLAN_CUPTI` says): the loader's search
/// path, then the toolkit's usual places.
fn candidates() -> Vec<String> {
    let mut paths = vec!["libcupti.so.13".to_owned(), "libcupti.so".to_owned()];
    let roots = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|var| std::env::var(var).ok())
        .chain(["/usr/local/cuda".to_owned()]);
    for root in roots {
        for dir in ["extras/CUPTI/lib64", "lib64", "targets/x86_64-linux/lib"] {
            paths.push(format!("{root}/{dir}/libcupti.so"));
        }
    }
    paths
}

/// Loads CUPTI, finds its functions and registers the buffer callbacks.
fn load() -> Result<Api, String> {
    let loaded = dynamic::open("CUPTI", "MEMPLAN_CUPTI", candidates())?;
    // SAFETY (each lookup): the type is the function's in CUPTI 13's
    // headers (and every CUPTI since 10).
    let register: unsafe extern "C" fn(Requested, Completed) -> Status =
        unsafe { loaded.function("cuptiActivityRegisterCallbacks")? };
    let api = unsafe {
        Api {
            result_string: loaded.function("cuptiGetResultString")?,
            enable: loaded.function("cuptiActivityEnable")?,
            disable: loaded.function("cuptiActivityDisable")?,
            set_attribute: loaded.function("cuptiActivitySetAttribute")?,
            flush_all: loaded.function("cuptiActivityFlushAll")?,
            next_record: loaded.function("cuptiActivityGetNextRecord")?,
            push: loaded.function("cuptiActivityPushExternalCorrelationId")?,
            pop: loaded.function("cuptiActivityPopExternalCorrelationId")?,
            timestamp: loaded.function("cuptiGetTimestamp")?,
            _library: loaded.library,
        }
    };
    share_buffers(&api);
    // SAFETY: both callbacks have the types CUPTI calls them with.
    let status = unsafe { register(requested, completed) };
    if status != SUCCESS {
        return Err(format!(
            "cuptiActivityRegisterCallbacks failed: {}",
            api.describe(status)
        ));
    }
    Ok(api)
}

/// Has CUPTI write every thread's records into buffers they share, not a
/// buffer per thread (CUDA 13's default); only before the callbacks are
/// registered and any kind is on. With a buffer per thread, collecting
/// records (`cuptiActivityFlushAll`, unforced, as every report does) while
/// other threads loaded modules and made and dropped streams, events and
/// graphs crashed inside CUPTI 13 in 11 of 13 stress runs; shared, in none
/// of 3 (60 s each), and fills, uploads and queries cost the host less
/// (a fill 4.1 -> 3.5 us; `notes/gpu-run-cupti-kinds-one-gpu.log`). Every
/// thread's records then share buffers, so a report may wait on a buffer
/// that also holds another thread's unfinished work (`PATIENCE`, then
/// those ops count as without a record). A CUPTI that does not know the
/// attribute keeps its buffers as they are. Only CUDA 13.0's was tried:
/// the stress test set the attribute before `cuInit`, memplan sets it at
/// the first timed plan, and does not read it back. Beside another CUPTI
/// client that has turned kinds on already, this changes the attribute
/// mid-session, which CUPTI's header calls undefined: beside another
/// client, time by events (the module's doc).
fn share_buffers(api: &Api) {
    let mut per_thread: u8 = 0;
    let mut size = size_of::<u8>();
    // SAFETY: the attribute's value is a `u8`, of the size passed. The
    // status is not read: an older CUPTI refuses an attribute it does not
    // know, and keeps its buffers as they are.
    unsafe {
        (api.set_attribute)(
            PER_THREAD_ACTIVITY_BUFFER,
            &mut size,
            (&raw mut per_thread).cast(),
        )
    };
}

/// CUPTI asks for a buffer to fill. `malloc`'s, 16-byte aligned (records
/// need 8), as CUPTI's own samples do: a buffer may come back to whichever
/// client registered last, and `free` is what every one of them uses.
unsafe extern "C" fn requested(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    // SAFETY: a plain allocation; null (no memory) tells CUPTI to drop
    // records, which reports count.
    let memory = unsafe { libc::malloc(BUFFER_BYTES) }.cast::<u8>();
    // SAFETY: CUPTI passes three writable out-parameters.
    unsafe {
        *buffer = memory;
        *size = if memory.is_null() { 0 } else { BUFFER_BYTES };
        *max_records = RECORDS_PER_BUFFER;
    }
}

/// CUPTI hands a buffer back: its records go to the store, and the buffer
/// is freed. Must not unwind (it is called from C), and does not.
unsafe extern "C" fn completed(
    _context: *mut c_void,
    _stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    let mut found = Vec::new();
    if let Some(Ok(api)) = API.get() {
        let end = buffer as usize + valid;
        let mut record: *mut u8 = std::ptr::null_mut();
        // SAFETY: `buffer` holds `valid` bytes of records; CUPTI steps
        // `record` through them.
        while unsafe { (api.next_record)(buffer, valid, &mut record) } == SUCCESS {
            let left = end.saturating_sub(record as usize);
            if left < 4 {
                break;
            }
            // SAFETY: a record starts with its 4-byte kind, and is as long
            // as its kind's struct (at least `needed_len`), inside the buffer.
            let kind = unsafe { record.cast::<u32>().read_unaligned() };
            let len = records::needed_len(kind).min(left);
            let bytes = unsafe { std::slice::from_raw_parts(record, len) };
            found.extend(records::parse(bytes));
        }
    }
    // SAFETY: a buffer from `malloc` (see `requested`), not used again.
    unsafe { libc::free(buffer.cast()) };
    // The store is locked only once CUPTI's call is done with.
    let mut store = lock(&STORE);
    for record in found {
        store.add(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toolkits_places_are_tried_after_the_loaders() {
        let paths = candidates();
        assert_eq!(paths[0], "libcupti.so.13");
        assert!(
            paths
                .iter()
                .any(|p| p == "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so")
        );
    }
}
