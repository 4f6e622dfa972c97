// Kernels of C++ classes, declared with Rust types that name them: memplan's
// `Float4` for `float4 *`, and a struct of the user's for `struct Affine`
// by value. Their layouts are compared with nvcc's while this compiles.
#![deny(warnings)]

use memplan::{Float4, KernelValue, memplan};

/// `struct Affine` of classes.cu.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Affine {
    pub scale: f32,
    pub offset: f32,
}

// SAFETY: two floats, as `struct Affine { float scale; float offset; }`.
unsafe impl KernelValue for Affine {
    const CPP_NAME: Option<&'static str> = Some("Affine");
}

memplan! {
    plan Scale(n: usize, a: Affine) {
        kernel affine4(v: &mut [Float4; n], a: Affine, n: i32) from memplan_kernels::CLASSES;
        host h: [Float4; n] pinned;
        device v: [Float4; n];
        stream s;
        on s {
            copy h -> v;
            launch affine4<<<blocks(n, 256), 256>>>(v, a, n as i32);
            copy v -> h;
        }
    }
}

fn main() {
    let _ = Scale::new;
}
