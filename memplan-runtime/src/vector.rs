//! CUDA's vector types (`float4`, `int2`, ...) as Rust types that kernels
//! take: laid out as `vector_types.h` lays them out (the alignment
//! included, which loads of 8 and 16 bytes need), usable as buffer
//! elements, and naming their C++ type, so that a kernel declared
//! `v: &mut [Float4; n]` matches `float4 *v` (the declaration check
//! compares their layouts too).

use crate::kernel::KernelValue;

macro_rules! vectors {
    ($($(#[$doc:meta])* $name:ident ($cpp:literal, $align:literal): $elem:ty { $($field:ident),+ })*) => {
        $(
            $(#[$doc])*
            #[repr(C, align($align))]
            #[derive(Clone, Copy, Debug, Default, PartialEq)]
            pub struct $name {
                $(
                    #[doc = concat!("The `", stringify!($field), "` component.")]
                    pub $field: $elem,
                )+
            }

            impl $name {
                /// Every component `value`.
                pub const fn splat(value: $elem) -> $name {
                    $name { $($field: value),+ }
                }
            }

            // SAFETY: plain numbers with no padding (as many bytes as the
            // alignment), for which every bit pattern is a value.
            unsafe impl bytemuck::Zeroable for $name {}
            // SAFETY: as above.
            unsafe impl bytemuck::Pod for $name {}
            // SAFETY: no host pointers inside.
            unsafe impl cust::memory::DeviceCopy for $name {}
            // SAFETY: laid out as the C++ type it names (vector_types.h:
            // its components in order, aligned to its size).
            unsafe impl KernelValue for $name {
                const CPP_NAME: Option<&'static str> = Some($cpp);
            }
        )*
    };
}

vectors! {
    /// CUDA's `float2`.
    Float2("float2", 8): f32 { x, y }
    /// CUDA's `float4`.
    Float4("float4", 16): f32 { x, y, z, w }
    /// CUDA's `double2`.
    Double2("double2", 16): f64 { x, y }
    /// CUDA's `int2`.
    Int2("int2", 8): i32 { x, y }
    /// CUDA's `int4`.
    Int4("int4", 16): i32 { x, y, z, w }
    /// CUDA's `uint2`.
    UInt2("uint2", 8): u32 { x, y }
    /// CUDA's `uint4`.
    UInt4("uint4", 16): u32 { x, y, z, w }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laid_out_as_cuda_lays_them_out() {
        assert_eq!((size_of::<Float2>(), align_of::<Float2>()), (8, 8));
        assert_eq!((size_of::<Float4>(), align_of::<Float4>()), (16, 16));
        assert_eq!((size_of::<Double2>(), align_of::<Double2>()), (16, 16));
        assert_eq!((size_of::<Int2>(), align_of::<Int2>()), (8, 8));
        assert_eq!((size_of::<UInt4>(), align_of::<UInt4>()), (16, 16));
        let v = Float4::splat(1.5);
        assert_eq!(bytemuck::cast::<Float4, [f32; 4]>(v), [1.5; 4]);
        assert_eq!(Float4::CPP_NAME, Some("float4"));
    }
}
