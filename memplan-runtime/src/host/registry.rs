//! Page-locked caller memory, counted. The driver registers a page once:
//! registering pages already registered fails, and unregistering unpins
//! them for every user at once. Read-only slices may be borrowed many times
//! at once (a [`RegisteredRef`](crate::RegisteredRef), runs of plans on
//! several threads), so every registration memplan makes goes through here:
//! a range whose pages are already locked by memplan is shared and counted,
//! and unregistered when its last user is done.

use crate::context::{Context, release_in};
use crate::driver::{self, DriverError};
use crate::error::Fault;
use cust::sys::CUcontext;
use std::sync::Mutex;

/// A range memplan registered, and how many holds it has.
struct Entry {
    start: u64,
    end: u64,
    flags: u32,
    context: usize,
    holds: usize,
}

static LOCKED: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// A hold on page-locked memory; released on drop.
pub(crate) struct Hold {
    /// The registration's start, or `None` where the pages were locked by
    /// code outside memplan, which keeps them locked.
    start: Option<u64>,
    context: Context,
}

/// Page-locks `start..end` (host addresses) in `context` with `flags`, or
/// shares a registration memplan made of pages that cover it.
pub(crate) fn lock(context: &Context, start: u64, end: u64, flags: u32) -> Result<Hold, Fault> {
    let mut hold = Hold {
        start: None,
        context: context.clone(),
    };
    if end <= start {
        return Ok(hold);
    }
    let page = page_size();
    let (first, last) = (start / page, (end - 1) / page);
    let key = raw(context) as usize;
    let mut locked = LOCKED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for entry in locked.iter_mut() {
        let (entry_first, entry_last) = (entry.start / page, (entry.end - 1) / page);
        if last < entry_first || entry_last < first {
            continue;
        }
        let covered = entry_first <= first && last <= entry_last;
        if covered && entry.context == key && entry.flags & flags == flags {
            entry.holds += 1;
            hold.start = Some(entry.start);
            return Ok(hold);
        }
        return Err(Fault::Unsupported(
            "the memory shares pages with memory page-locked for another use (another run, \
             or a Registered slice) that does not cover it; pass slices that do not share \
             pages, or the same slice",
        ));
    }
    context.bind_to_thread().map_err(|e| e.fault().clone())?;
    // SAFETY: the caller lends `start..end` for as long as the hold lives;
    // the last hold's drop unregisters it.
    let registered =
        unsafe { driver::mem_host_register(start as *mut _, (end - start) as usize, flags) };
    match registered {
        Ok(()) => {
            locked.push(Entry {
                start,
                end,
                flags,
                context: key,
                holds: 1,
            });
            hold.start = Some(start);
            Ok(hold)
        }
        // Locked by code outside memplan (with `unsafe`), which keeps it so.
        Err(code) if code == DriverError::HOST_MEMORY_ALREADY_REGISTERED => Ok(hold),
        Err(code) => Err(code.into()),
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let Some(start) = self.start else { return };
        let mut locked = LOCKED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(index) = locked.iter().position(|entry| entry.start == start) else {
            return;
        };
        locked[index].holds -= 1;
        if locked[index].holds == 0 {
            locked.swap_remove(index);
            // SAFETY: registered in `lock`; this was its last hold, and each
            // hold is dropped only after the work that used it is done.
            release_in(&self.context, || unsafe {
                driver::mem_host_unregister(start as *mut _)
            });
        }
    }
}

fn raw(context: &Context) -> CUcontext {
    context.raw()
}

/// The host's page size.
pub(crate) fn page_size() -> u64 {
    unsafe extern "C" {
        fn sysconf(name: std::ffi::c_int) -> std::ffi::c_long;
    }
    /// `_SC_PAGESIZE` on Linux.
    const PAGE_SIZE: std::ffi::c_int = 30;
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { sysconf(PAGE_SIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_size_is_a_power_of_two() {
        assert!(page_size().is_power_of_two());
    }
}
