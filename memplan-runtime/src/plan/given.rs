//! What the user's expressions give a plan, by op: kernel arguments, fill
//! values and launch dimensions at `new` ([`Givens`], kept by the
//! [`Builder`](super::Builder)), and the sizes and values of each run
//! ([`RunGiven`]). The generated code evaluates the expressions in safe
//! code and hands over plain values through [`given_methods`].

use super::info::Elem;
use crate::kernel::Dim3;
use crate::memory::Element;
use bytemuck::NoUninit;
use std::mem::MaybeUninit;

/// The methods through which generated code hands over what the user's
/// expressions gave, written once for each receiver that keeps them in a
/// `given: Givens` field ([`Builder`](super::Builder) at `new`, [`RunGiven`] at each run,
/// `Checker` at `check`): values and fill values, and, with `dimensions`,
/// launch grids, blocks and dynamic shared memory.
macro_rules! given_methods {
    (values $(, $dimensions:ident)?) => {
        /// The value of kernel argument `arg` of launch `op`.
        pub fn value<T: Copy + 'static>(&mut self, op: u16, arg: u16, value: T) {
            self.given.value(op, arg, value);
        }

        /// The value fill `op` writes.
        pub fn fill<T: $crate::memory::Element + bytemuck::NoUninit>(&mut self, op: u16, value: T) {
            self.given.fill(op, value);
        }

        $crate::plan::given::given_methods!(@dimensions $($dimensions)?);
    };
    (@dimensions) => {};
    (@dimensions dimensions) => {
        /// The grid of launch `op`, where the plan computes it with Rust code.
        pub fn grid(&mut self, op: u16, grid: impl Into<$crate::kernel::Dim3>) {
            self.given.grid(op, grid);
        }

        /// The block of launch `op`, where the plan computes it with Rust code.
        pub fn block(&mut self, op: u16, block: impl Into<$crate::kernel::Dim3>) {
            self.given.block(op, block);
        }

        /// The dynamic shared memory of launch `op`, where the plan computes
        /// it with Rust code.
        pub fn shared(&mut self, op: u16, bytes: u32) {
            self.given.shared(op, bytes);
        }
    };
}
pub(crate) use given_methods;

/// The values `new` gave, by op.
#[derive(Default)]
pub(crate) struct Givens {
    /// Sorted by op, then argument.
    pub values: Vec<Given<Value>>,
    pub fills: Vec<Given<FillValue>>,
    pub dims: Vec<Given<(Which, Dim3)>>,
    pub shared: Vec<Given<u32>>,
}

impl Givens {
    /// The value of kernel argument `arg` of launch `op`. Any `Copy` type
    /// is kept; only one that is the parameter's own type (a `KernelValue`:
    /// the plan's description requires it of every value parameter) is
    /// ever passed, which resolving the launch checks.
    pub fn value<T: Copy + 'static>(&mut self, op: u16, arg: u16, value: T) {
        // SAFETY: the value's bytes, padding included, as
        // `MaybeUninit<u8>`s, which may be uninitialized.
        let raw = unsafe {
            std::slice::from_raw_parts((&raw const value).cast::<MaybeUninit<u8>>(), size_of::<T>())
        };
        let bytes = ValueBytes::from(raw);
        // After any given before for the same argument: the first stays
        // the one `value_of` finds, as it was when values were searched in
        // order.
        let at = self.values.partition_point(|g| (g.op, g.arg) <= (op, arg));
        self.values.insert(
            at,
            Given {
                op,
                arg,
                value: Value {
                    bytes,
                    align: align_of::<T>(),
                    type_id: std::any::TypeId::of::<T>(),
                    integer: integer_of(&value),
                    initialized: without_padding::<T>(),
                },
            },
        );
    }

    /// The value given for argument `arg` of launch `op`.
    pub fn value_of(&self, op: u16, arg: u16) -> Option<&Value> {
        self.value_at(op, arg).map(|at| &self.values[at].value)
    }

    /// Where in `values` the value given for argument `arg` of launch
    /// `op` is.
    pub fn value_at(&self, op: u16, arg: u16) -> Option<usize> {
        let at = self.values.partition_point(|g| (g.op, g.arg) < (op, arg));
        let given = self.values.get(at).filter(|g| (g.op, g.arg) == (op, arg));
        given.map(|_| at)
    }

    /// The value fill `op` writes.
    pub fn fill<T: Element + NoUninit>(&mut self, op: u16, value: T) {
        let bytes = FillBytes::from(bytemuck::bytes_of(&value));
        let elem = Elem::of::<T>();
        self.fills.push(Given {
            op,
            arg: 0,
            value: FillValue { bytes, elem },
        });
    }

    /// The grid of launch `op`, where the plan computes it with Rust code.
    pub fn grid(&mut self, op: u16, grid: impl Into<Dim3>) {
        self.dims.push(Given {
            op,
            arg: 0,
            value: (Which::Grid, grid.into()),
        });
    }

    /// The block of launch `op`, where the plan computes it with Rust code.
    pub fn block(&mut self, op: u16, block: impl Into<Dim3>) {
        self.dims.push(Given {
            op,
            arg: 0,
            value: (Which::Block, block.into()),
        });
    }

    /// The dynamic shared memory of launch `op`, where the plan computes it
    /// with Rust code.
    pub fn shared(&mut self, op: u16, bytes: u32) {
        self.shared.push(Given {
            op,
            arg: 0,
            value: bytes,
        });
    }

    /// Replaces what was given for the arguments and fills `run` gives
    /// values for, keeping the rest (a launch's values `new` gave), and
    /// says whether anything changed: a value whose bytes differ, or of a
    /// type that may have padding (never known to be the same), or one
    /// given for the first time. Where `run` gives an argument or a fill
    /// twice, its first value is the one given, as `value_of` finds it.
    /// A run's grids, blocks and shared memory are not values it may give
    /// (the runner refuses a run that gives them) and are not read here.
    pub(crate) fn replace(&mut self, run: &Givens) -> bool {
        let key = |g: &Given<Value>| (g.op, g.arg);
        let mut changed = false;
        // Both sorted by launch and argument. Where `run` gives an
        // argument, its first value is compared with the first kept (the
        // one `value_of` finds) and written over it where it differs; the
        // kept ones are looked up among those there before this run's
        // were added, which stay sorted.
        let kept = self.values.len();
        let mut last = None;
        for new in &run.values {
            if last == Some(key(new)) {
                continue;
            }
            last = Some(key(new));
            let at = self.values[..kept].partition_point(|old| key(old) < key(new));
            match self.values[..kept].get(at) {
                Some(old) if key(old) == key(new) => {
                    if !old.value.same_as(&new.value) {
                        self.values[at].value = new.value.clone();
                        changed = true;
                    }
                }
                _ => {
                    self.values.push(new.clone());
                    changed = true;
                }
            }
        }
        // Arguments given for the first time (never, for a plan's own
        // runs, past the first): sorted again, for `value_of`.
        if self.values.len() > kept {
            self.values.sort_by_key(key);
        }
        for (at, new) in run.fills.iter().enumerate() {
            if run.fills[..at].iter().any(|earlier| earlier.op == new.op) {
                continue;
            }
            match self.fills.iter_mut().find(|old| old.op == new.op) {
                Some(old) if old.value.same_as(&new.value) => {}
                Some(old) => {
                    old.value = new.value.clone();
                    changed = true;
                }
                None => {
                    self.fills.push(new.clone());
                    changed = true;
                }
            }
        }
        changed
    }

    /// Forgets everything given, keeping the room it took.
    fn clear(&mut self) {
        self.values.clear();
        self.fills.clear();
        self.dims.clear();
        self.shared.clear();
    }
}

/// What a run of a plan with `run` parameters gives: the sizes, in the
/// order of the plan's `run` size parameters, and the values of the
/// expressions that read its `run` value parameters, which the generated
/// `run` evaluates in safe code. The plan keeps one, emptied before each
/// run, so that giving a run its values allocates nothing (but for fill
/// values, and kernel values past 32 bytes, which are boxed).
#[derive(Default)]
pub struct RunGiven {
    pub(crate) sizes: Vec<usize>,
    pub(crate) given: Givens,
}

impl RunGiven {
    /// The run's sizes, in the order of the plan's `run` size parameters.
    pub fn sizes(&mut self, sizes: &[usize]) {
        self.sizes.clear();
        self.sizes.extend_from_slice(sizes);
    }

    /// Forgets what the last run gave, keeping the room it took.
    pub(crate) fn clear(&mut self) {
        self.sizes.clear();
        self.given.clear();
    }

    // A run gives values only: its dimensions are the plan's.
    given_methods!(values);
}

/// `value`, if it is of a primitive integer type: what the checks of
/// extents compare with the size it was cast from. Generic, so that each
/// type's answer is known when it is compiled: a run gives values each
/// time.
#[inline]
fn integer_of<T: 'static>(value: &T) -> Option<i128> {
    let value: &dyn std::any::Any = value;
    macro_rules! as_integer {
        ($($int:ty),*) => {
            $(if let Some(value) = value.downcast_ref::<$int>() {
                return i128::try_from(*value).ok();
            })*
        };
    }
    as_integer!(i8, u8, i16, u16, i32, u32, i64, u64, isize, usize);
    None
}

/// Whether every byte of `value` is initialized: a type memplan knows to
/// have no padding. Another type's bytes are passed to the driver as they
/// are, and never compared (see `Value::initialized`).
#[inline]
fn without_padding<T: 'static>() -> bool {
    use crate::vector::{Double2, Float2, Float4, Int2, Int4, UInt2, UInt4};
    use std::any::TypeId;
    macro_rules! any_of {
        ($($ty:ty),*) => { false $(|| TypeId::of::<T>() == TypeId::of::<$ty>())* };
    }
    any_of!(
        i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, f32, f64, bool, Float2, Float4,
        Double2, Int2, Int4, UInt2, UInt4
    )
}

/// Something `new` gave for op `op` (and its argument `arg`, for values).
#[derive(Clone)]
pub(crate) struct Given<T> {
    pub op: u16,
    pub arg: u16,
    pub value: T,
}

/// A kernel value argument's bytes, as the kernel reads them.
#[derive(Clone)]
pub(crate) struct Value {
    pub bytes: ValueBytes,
    pub align: usize,
    /// Its type: what the kernel's parameter must take.
    pub type_id: std::any::TypeId,
    /// Its value, when it is an integer (for the checks of extents).
    pub integer: Option<i128>,
    /// Whether every byte of `bytes` is initialized (its type has no
    /// padding), so that the bytes may be read and compared: a graph
    /// replaying a launch changes its node only when its arguments change.
    pub initialized: bool,
}

impl Value {
    /// Whether `other` is this value, byte for byte; never for a type
    /// that may have padding, whose bytes cannot be read.
    fn same_as(&self, other: &Value) -> bool {
        if !(self.initialized && other.initialized) || self.type_id != other.type_id {
            return false;
        }
        // SAFETY: every byte of both is initialized (`initialized`), and
        // `MaybeUninit<u8>` has `u8`'s layout.
        let bytes = |value: &Value| unsafe {
            std::slice::from_raw_parts(value.bytes.as_ptr().cast::<u8>(), value.bytes.len())
        };
        bytes(self) == bytes(other)
    }
}

/// A fill value's bytes, and its type.
#[derive(Clone)]
pub(crate) struct FillValue {
    pub bytes: FillBytes,
    pub elem: Elem,
}

impl FillValue {
    fn same_as(&self, other: &FillValue) -> bool {
        self.elem.same_as(&other.elem) && *self.bytes == *other.bytes
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Grid,
    Block,
}

/// A launch value's bytes, padding included.
pub(crate) type ValueBytes = SmallBytes<MaybeUninit<u8>>;

/// A fill value's bytes.
pub(crate) type FillBytes = SmallBytes<u8>;

/// Bytes kept in place up to [`INLINE`] of them (a scalar or a vector
/// type), so that a run giving values allocates nothing for them; on the
/// heap past that. `B` is `u8`, or `MaybeUninit<u8>` for bytes that may
/// be padding.
pub(crate) enum SmallBytes<B: Byte> {
    Inline { bytes: [B; INLINE], len: u8 },
    Heap(Box<[B]>),
}

/// The most bytes kept in place: a `double4`'s, the largest of CUDA's
/// vector types.
pub(crate) const INLINE: usize = 32;

/// A byte as [`SmallBytes`] holds it.
pub(crate) trait Byte: Copy {
    /// What the unused part of an inline array holds.
    const BLANK: Self;
}

impl Byte for u8 {
    const BLANK: Self = 0;
}

impl Byte for MaybeUninit<u8> {
    const BLANK: Self = MaybeUninit::uninit();
}

impl<B: Byte> From<&[B]> for SmallBytes<B> {
    fn from(bytes: &[B]) -> Self {
        match u8::try_from(bytes.len()) {
            Ok(len) if bytes.len() <= INLINE => {
                let mut inline = [B::BLANK; INLINE];
                inline[..bytes.len()].copy_from_slice(bytes);
                SmallBytes::Inline { bytes: inline, len }
            }
            _ => SmallBytes::Heap(bytes.into()),
        }
    }
}

impl<B: Byte> std::ops::Deref for SmallBytes<B> {
    type Target = [B];

    fn deref(&self) -> &Self::Target {
        match self {
            SmallBytes::Inline { bytes, len } => &bytes[..usize::from(*len)],
            SmallBytes::Heap(bytes) => bytes,
        }
    }
}

impl<B: Byte> Clone for SmallBytes<B> {
    fn clone(&self) -> Self {
        SmallBytes::from(&**self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::{Double2, Float4};

    /// Padding of its own: 1 + 3 + 4 bytes.
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Padded {
        flag: u8,
        value: u32,
    }

    #[test]
    fn a_value_keeps_its_bytes_type_and_integer() {
        let mut given = Givens::default();
        given.value(0, 1, 7_i32);
        given.value(0, 0, 2.5_f64);
        given.value(1, 0, Double2 { x: 1.0, y: -2.0 });
        given.value(2, 0, Padded { flag: 1, value: 9 });
        given.value(3, 0, [7_u8; 33]);
        let value = given.value_of(0, 1).unwrap();
        assert_eq!(value.integer, Some(7));
        assert!(value.initialized && value.bytes.len() == 4 && value.align == 4);
        assert!(matches!(value.bytes, SmallBytes::Inline { .. }));
        let value = given.value_of(0, 0).unwrap();
        assert_eq!(value.integer, None);
        assert!(value.initialized && value.same_as(value));
        assert!(given.value_of(1, 0).unwrap().initialized);
        // A type memplan does not know may have padding: never read.
        let padded = given.value_of(2, 0).unwrap();
        assert!(!padded.initialized && !padded.same_as(padded));
        assert_eq!(padded.bytes.len(), 8);
        // Past what is kept in place, on the heap, bytes intact.
        let large = given.value_of(3, 0).unwrap();
        assert!(matches!(large.bytes, SmallBytes::Heap(_)));
        // SAFETY: a `[u8; 33]`'s bytes, all initialized.
        let bytes: Vec<u8> = large
            .bytes
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect();
        assert_eq!(bytes, vec![7; 33]);
        assert!(given.value_of(0, 2).is_none());
    }

    #[test]
    fn replacing_values_keeps_the_others_in_order() {
        let mut kept = Givens::default();
        kept.value(0, 0, 1_i32);
        kept.value(2, 1, 2_i32);
        kept.value(5, 0, 3_i32);
        let mut run = Givens::default();
        run.value(2, 1, 20_i32);
        run.value(
            1,
            0,
            Float4 {
                x: 1.0,
                y: 2.0,
                z: 3.0,
                w: 4.0,
            },
        );
        assert!(kept.replace(&run));
        let order: Vec<(u16, u16)> = kept.values.iter().map(|g| (g.op, g.arg)).collect();
        assert_eq!(order, [(0, 0), (1, 0), (2, 1), (5, 0)]);
        assert_eq!(kept.value_of(2, 1).unwrap().integer, Some(20));
        let mut again = Givens::default();
        again.value(2, 1, 20_i32);
        assert!(!kept.replace(&again));
        // An argument given twice in one run: the first given stands, as
        // `value_of` finds it.
        let mut twice = Givens::default();
        twice.value(5, 0, 30_i32);
        twice.value(5, 0, 31_i32);
        assert_eq!(twice.value_of(5, 0).unwrap().integer, Some(30));
        assert!(kept.replace(&twice));
        assert_eq!(kept.value_of(5, 0).unwrap().integer, Some(30));
        // The first of the two is what is kept: giving it again changes
        // nothing, whatever follows it.
        let mut same_first = Givens::default();
        same_first.value(5, 0, 30_i32);
        same_first.value(5, 0, 32_i32);
        assert!(!kept.replace(&same_first));
        assert_eq!(kept.values.len(), 4);
        // Fills: replaced by launch, kept where the run gives none.
        let mut fills = Givens::default();
        fills.fill(7, 1.0_f32);
        fills.fill(8, 2_u32);
        kept.replace(&fills);
        let mut fill = Givens::default();
        fill.fill(7, 3.0_f32);
        assert!(kept.replace(&fill));
        assert!(!kept.replace(&fill));
        let bytes: Vec<(u16, Vec<u8>)> = kept
            .fills
            .iter()
            .map(|g| (g.op, g.value.bytes.to_vec()))
            .collect();
        assert_eq!(
            bytes,
            [
                (7, 3.0_f32.to_ne_bytes().to_vec()),
                (8, 2_u32.to_ne_bytes().to_vec())
            ]
        );
        // In place, allocating nothing, up to 32 bytes; a larger fill
        // value on the heap, bytes intact.
        assert!(matches!(
            kept.fills[0].value.bytes,
            SmallBytes::Inline { len: 4, .. }
        ));
        let mut large = Givens::default();
        large.fill(9, [3_u64; 5]);
        assert!(matches!(large.fills[0].value.bytes, SmallBytes::Heap(_)));
        assert_eq!(
            *large.fills[0].value.bytes,
            *bytemuck::bytes_of(&[3_u64; 5])
        );
        // A fill given twice in one run: the first stands.
        let mut twice = Givens::default();
        twice.fill(7, 5.0_f32);
        twice.fill(7, 6.0_f32);
        assert!(kept.replace(&twice));
        let seven = kept.fills.iter().find(|g| g.op == 7).unwrap();
        assert_eq!(&*seven.value.bytes, &5.0_f32.to_ne_bytes()[..]);
        assert_eq!(kept.fills.len(), 2);
    }

    /// New arguments added before one kept is replaced: the kept one is
    /// found among those there before, not in the grown, unsorted list.
    #[test]
    fn a_kept_value_after_new_ones_is_replaced() {
        let mut kept = Givens::default();
        kept.value(0, 0, 1_i32);
        kept.value(3, 0, 2_i32);
        let mut run = Givens::default();
        run.value(1, 0, 10_i32);
        run.value(2, 0, 11_i32);
        run.value(3, 0, 12_i32);
        kept.replace(&run);
        let order: Vec<(u16, u16, Option<i128>)> = kept
            .values
            .iter()
            .map(|g| (g.op, g.arg, g.value.integer))
            .collect();
        assert_eq!(
            order,
            [
                (0, 0, Some(1)),
                (1, 0, Some(10)),
                (2, 0, Some(11)),
                (3, 0, Some(12))
            ]
        );
        assert!(!kept.replace(&run));
        // Against an independent model: the run's first value of each
        // argument, else the kept one, for every mix of the two, the kept
        // value the same as the run's or not; changed where the model is.
        for mask in 0u32..(1 << 12) {
            let mut kept = Givens::default();
            let mut model = std::collections::BTreeMap::new();
            for op in 0..4u16 {
                if mask & (1 << op) != 0 {
                    let same = mask & (1 << (op + 8)) != 0;
                    let value = if same { 100 } else { 0 } + i32::from(op);
                    kept.value(op, 0, value);
                    model.insert(op, i128::from(value));
                }
            }
            let mut run = Givens::default();
            let before = model.clone();
            for op in 0..4u16 {
                if mask & (1 << (op + 4)) != 0 {
                    run.value(op, 0, 100 + i32::from(op));
                    run.value(op, 0, 200 + i32::from(op));
                    model.insert(op, 100 + i128::from(op));
                }
            }
            assert_eq!(kept.replace(&run), model != before, "mask {mask:012b}");
            assert!(!kept.replace(&run), "mask {mask:012b}");
            for op in 0..4u16 {
                let got = kept.value_of(op, 0).and_then(|v| v.integer);
                assert_eq!(got, model.get(&op).copied(), "mask {mask:012b}, op {op}");
            }
            assert_eq!(kept.values.len(), model.len(), "mask {mask:012b}");
        }
    }

    #[test]
    fn value_bytes_in_place_up_to_32_and_on_the_heap_past() {
        let mut given = Givens::default();
        given.value(0, 0, [1_u8; 32]);
        given.value(1, 0, ());
        given.value::<&i32>(2, 0, &5);
        let inline = &given.value_of(0, 0).unwrap().bytes;
        assert!(matches!(inline, SmallBytes::Inline { len: 32, .. }));
        let cloned = inline.clone();
        // SAFETY: a `[u8; 32]`'s bytes, all initialized.
        let read = |b: &ValueBytes| {
            b.iter()
                .map(|b| unsafe { b.assume_init() })
                .collect::<Vec<u8>>()
        };
        assert_eq!(read(&cloned), vec![1; 32]);
        assert!(given.value_of(1, 0).unwrap().bytes.is_empty());
        // A reference is not an integer, and not known to be without
        // padding: as `dyn Any` saw it.
        let reference = given.value_of(2, 0).unwrap();
        assert!(reference.integer.is_none() && !reference.initialized);
        type Alias = u32;
        assert!(without_padding::<Alias>() && !without_padding::<&i32>());
        assert_eq!(integer_of(&(7 as Alias)), Some(7));
    }

    #[test]
    fn a_run_given_is_emptied_and_keeps_its_room() {
        let mut run = RunGiven::default();
        run.sizes(&[3, 4]);
        run.value(0, 0, 1.0_f32);
        run.fill(1, 2_u32);
        let room = run.given.values.capacity();
        run.clear();
        assert!(run.sizes.is_empty() && run.given.values.is_empty() && run.given.fills.is_empty());
        assert_eq!(run.given.values.capacity(), room);
        run.sizes(&[5]);
        assert_eq!(run.sizes, [5]);
    }
}
