//! The caller's slices a run borrows: checked against the plan's
//! declarations, and page-locked for the run where the plan says
//! `registered`.
//!
//! Two `registered` parameters may be the same memory (`run(&v, &v)`, both
//! read-only) or share a page. The driver registers a range of pages once:
//! registering the same pages twice fails, and unregistering the first
//! registration would unpin what the second still uses. So the slices'
//! ranges are merged first, and each merged range locked once for the run,
//! through the registry that counts every registration memplan makes.

use super::info::Elem;
use crate::context::Context;
use crate::error::Fault;
use crate::host::registry::{self, Hold, page_size};
use crate::memory::Element;
use std::marker::PhantomData;

/// A caller's slice, lent to one run of a plan (the generated `run` makes
/// these from its arguments).
pub struct Slice<'a> {
    ptr: *mut u8,
    len: usize,
    elem: Elem,
    mutable: bool,
    borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> Slice<'a> {
    /// A slice the run may only read.
    pub fn new<T: Element>(slice: &'a [T]) -> Slice<'a> {
        Slice {
            // Never written through: `mutable` is false.
            ptr: slice.as_ptr().cast_mut().cast(),
            len: slice.len(),
            elem: Elem::of::<T>(),
            mutable: false,
            borrow: PhantomData,
        }
    }

    /// A slice the run may read and write.
    pub fn new_mut<T: Element>(slice: &'a mut [T]) -> Slice<'a> {
        Slice {
            ptr: slice.as_mut_ptr().cast(),
            len: slice.len(),
            elem: Elem::of::<T>(),
            mutable: true,
            borrow: PhantomData,
        }
    }

    /// The slice as `[T]`, for a host step that reads it.
    pub fn get<T: Element>(&self) -> Result<&[T], Fault> {
        if !self.elem.is::<T>() {
            return Err(Fault::Unsupported(
                "a caller's slice of another element type",
            ));
        }
        // SAFETY: `len` elements of `T` (checked), borrowed for `'a`.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr.cast(), self.len) })
    }

    /// The slice as `[T]`, for a host step that writes it.
    pub fn get_mut<T: Element>(&mut self) -> Result<&mut [T], Fault> {
        if !self.elem.is::<T>() || !self.mutable {
            return Err(Fault::Unsupported(
                "a caller's slice of another element type, or borrowed to read only",
            ));
        }
        // SAFETY: `len` elements of `T` (checked), borrowed mutably for `'a`.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.cast(), self.len) })
    }

    pub(crate) fn address(&self) -> u64 {
        self.ptr as u64
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn elem(&self) -> Elem {
        self.elem
    }

    pub(crate) fn is_mutable(&self) -> bool {
        self.mutable
    }
}

/// Host step `step`'s caller slices: `indices[i]` of `slices`, each once.
pub fn pick<'s, 'a, const N: usize>(
    slices: &'s mut [Slice<'a>],
    indices: [usize; N],
) -> Result<[&'s mut Slice<'a>; N], Fault> {
    slices.get_disjoint_mut(indices).map_err(|_| {
        Fault::Unsupported("a host step lists a caller's slice twice, or one the run lacks")
    })
}

/// A copy of a plan's value parameter, for a host step; asks for `Copy`
/// at the parameter's type.
pub fn copied<T: Copy>(value: &T) -> T {
    *value
}

/// Memory page-locked for a run; unlocked on drop, which comes after the
/// run has been waited for.
#[derive(Default)]
pub(crate) struct Registrations {
    _holds: Vec<Hold>,
}

/// A range of caller memory to page-lock, and the parameter it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lock {
    pub start: u64,
    pub end: u64,
    pub param: usize,
}

impl Registrations {
    /// Page-locks the ranges of `locks` (merged where they share a page);
    /// on failure, the parameter whose range failed.
    pub fn lock(
        context: &Context,
        locks: &[Lock],
        portable: bool,
    ) -> Result<Registrations, (usize, Fault)> {
        let flags = if portable {
            cust::sys::CU_MEMHOSTREGISTER_PORTABLE
        } else {
            0
        };
        let mut holds = Vec::new();
        for range in merged(locks, page_size()) {
            // The slices are borrowed for the run, which outlives the holds.
            let hold = registry::lock(context, range.start, range.end, flags)
                .map_err(|fault| (range.param, fault))?;
            holds.push(hold);
        }
        Ok(Registrations { _holds: holds })
    }
}

/// The ranges of `locks`, sorted, with ranges that overlap or share a page
/// merged into one (the driver locks whole pages, once); empty ranges
/// dropped. Each merged range names the first parameter in it.
fn merged(locks: &[Lock], page: u64) -> Vec<Lock> {
    let mut sorted: Vec<Lock> = locks.iter().copied().filter(|l| l.end > l.start).collect();
    sorted.sort_by_key(|l| (l.start, l.param));
    let mut out: Vec<Lock> = Vec::new();
    for lock in sorted {
        match out.last_mut() {
            Some(last) if lock.start / page <= (last.end - 1) / page => {
                last.end = last.end.max(lock.end);
            }
            _ => out.push(lock),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(start: u64, end: u64, param: usize) -> Lock {
        Lock { start, end, param }
    }

    #[test]
    fn the_same_memory_is_locked_once() {
        let locks = [lock(8192, 12288, 0), lock(8192, 12288, 1)];
        assert_eq!(merged(&locks, 4096), [lock(8192, 12288, 0)]);
    }

    #[test]
    fn ranges_on_one_page_merge_and_others_stay_apart() {
        let locks = [lock(5000, 6000, 1), lock(100, 200, 0), lock(300, 4100, 2)];
        assert_eq!(
            merged(&locks, 4096),
            [lock(100, 6000, 0)],
            "200..300 shares page 0, 4100 reaches page 1 where 5000 starts"
        );
        let apart = [lock(0, 4096, 0), lock(4096, 8192, 1)];
        assert_eq!(merged(&apart, 4096), apart);
        assert_eq!(merged(&[lock(64, 64, 0)], 4096), []);
    }

    #[test]
    fn slices_hand_back_only_their_own_type() {
        let mut data = [1.0f32, 2.0];
        let mut slice = Slice::new_mut(&mut data);
        assert!(slice.get::<u32>().is_err());
        assert_eq!(slice.get_mut::<f32>().unwrap(), [1.0, 2.0]);
        let read_only = [3u8];
        let mut slice = Slice::new(&read_only);
        assert!(slice.get_mut::<u8>().is_err(), "lent to read only");
        assert_eq!(slice.get::<u8>().unwrap(), [3]);
    }
}
