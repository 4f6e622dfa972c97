// `float4 *` points to 16-byte elements. A Rust type that names `float4`
// but has 4 bytes would let the kernel write four times past what the
// plan allocated; an alias named like it names nothing.
use memplan::{Float4, KernelValue, memplan};

#[repr(C)]
#[derive(Clone, Copy)]
struct Affine {
    scale: f32,
    offset: f32,
}

// SAFETY: two floats, as `struct Affine` in classes.cu.
unsafe impl KernelValue for Affine {
    const CPP_NAME: Option<&'static str> = Some("Affine");
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Narrow(f32);

// SAFETY: wrong on purpose, and caught: the layout is compared with nvcc's.
unsafe impl KernelValue for Narrow {
    const CPP_NAME: Option<&'static str> = Some("float4");
}

#[allow(non_camel_case_types)]
type float4 = f32;

memplan! {
    plan Named(n: usize, a: Affine) {
        kernel affine4(v: &mut [Narrow; n], a: Affine, n: i32) from memplan_kernels::CLASSES;
    }

    plan Aliased(n: usize, a: Affine) {
        kernel affine4(v: &mut [float4; n], a: Affine, n: i32) from memplan_kernels::CLASSES;
    }

    plan Right(n: usize, a: Affine) {
        kernel affine4(v: &mut [Float4; n], a: Affine, n: i32) from memplan_kernels::CLASSES;
    }
}

fn main() {}
