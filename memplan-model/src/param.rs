//! Where kernel parameters lie in a kernel's argument buffer: each one's
//! slot, as the driver reports it or as Rust's layout of the arguments
//! puts it. The runtime compares the two; its errors list them.

/// Where one kernel parameter lies in the kernel's argument buffer, in
/// bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    /// Its offset from the buffer's start.
    pub offset: usize,
    /// Its size.
    pub size: usize,
}

/// The size and alignment of a kernel parameter as Rust passes it: a
/// buffer's device address, or a value of a type memplan's `KernelValue`
/// describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    /// Its size in bytes.
    pub size: usize,
    /// Its alignment in bytes.
    pub align: usize,
}

impl ParamLayout {
    /// A device address (`CUdeviceptr`, a `u64` on every platform CUDA
    /// has), as C++ pointers are passed.
    pub const POINTER: ParamLayout = ParamLayout::of::<u64>();

    /// A value of type `T`.
    pub const fn of<T>() -> ParamLayout {
        ParamLayout {
            size: core::mem::size_of::<T>(),
            align: core::mem::align_of::<T>(),
        }
    }

    /// Where parameters of these layouts lie, laid out as the C ABI does
    /// for kernel parameters: in order, each at a multiple of its alignment.
    pub fn slots(layouts: &[ParamLayout]) -> Vec<ParamSlot> {
        let mut end: usize = 0;
        layouts
            .iter()
            .map(|layout| {
                let offset = end.next_multiple_of(layout.align.max(1));
                end = offset + layout.size;
                ParamSlot {
                    offset,
                    size: layout.size,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_laid_out_at_multiples_of_their_alignment() {
        let slots = ParamLayout::slots(&[
            ParamLayout::of::<u8>(),
            ParamLayout::POINTER,
            ParamLayout::of::<i32>(),
            ParamLayout::of::<[f32; 3]>(),
            ParamLayout::of::<f64>(),
        ]);
        let at = |offset, size| ParamSlot { offset, size };
        assert_eq!(
            slots,
            [at(0, 1), at(8, 8), at(16, 4), at(20, 12), at(32, 8)]
        );
        assert_eq!(ParamLayout::slots(&[]), []);
    }
}
