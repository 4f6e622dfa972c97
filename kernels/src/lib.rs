//! The CUDA C++ kernels of memplan's examples and tests.
//!
//! `build.rs` compiles every `src/*.cu` with `memplan-build`, as your own
//! crate would: each file becomes a [`memplan_runtime::Image`] named after
//! it (`vector_add.cu` is [`VECTOR_ADD`]), a fatbin with machine code for
//! sm_80 and sm_90 and PTX for compute_90, and each kernel's C++ signature
//! and the contracts its source states (`MEMPLAN_READS(n)`), which plans
//! check their `kernel` declarations against. Load one with
//! `memplan::Module::from_image`.
//!
//! A crate of this one line is also the way to kernels for a crate under
//! `#![forbid(unsafe_code)]`: `include_kernels!` makes each image with
//! `unsafe`, here rather than there.
//!
//! ```
//! // Every fatbin starts with the fatbin magic number 0xBA55ED50.
//! assert_eq!(&memplan_kernels::VECTOR_ADD.bytes()[..4], &0xBA55ED50u32.to_le_bytes());
//! let kernels = memplan_kernels::VECTOR_ADD.kernels().unwrap();
//! let vadd = kernels.iter().find(|k| k.name == "vadd").unwrap();
//! assert_eq!(
//!     vadd.cpp,
//!     "extern \"C\" __global__ void vadd(MEMPLAN_READS(n) const float *a, \
//!      MEMPLAN_READS(n) const float *b, MEMPLAN_WRITES(n) float *c, int n)"
//! );
//! let checks = memplan_kernels::CHECKS.kernels().unwrap();
//! let sum = checks.iter().find(|k| k.name == "sum_u32").unwrap();
//! let contract = sum.contracts[1].unwrap();
//! assert_eq!(contract.access, memplan_runtime::ContractAccess::Atomic);
//! assert_eq!(contract.extent, "1");
//! ```
#![no_std]

memplan_runtime::include_kernels!();

/// The signatures memplan-build wrote beside the images, which `memplan!`
/// reads in a crate that builds its own kernels: here so that a test can
/// hold them against the images (`tests/signatures.rs`).
#[doc(hidden)]
pub const SIGNATURES_FILE: &str =
    include_str!(concat!(env!("OUT_DIR"), "/memplan_kernels.signatures"));

/// A plan declared by this crate's macro, which names its image through
/// `$crate`, with the kernel's name the caller's: a plan expanded in
/// another crate must find the image where the path was written, whatever
/// the spans around it (`tests/ui/pass/kernel_image_named_through_
/// dollar_crate.rs`).
#[doc(hidden)]
#[macro_export]
macro_rules! add_one_plan {
    ($name:ident, $kernel:ident) => {
        ::memplan::memplan! {
            plan $name(n: usize) {
                kernel $kernel(data: &mut [f32; n], n: i32) from $crate::ADD_ONE as "process_data";
                device d: [f32; n];
                fill d with 0.0;
                launch $kernel<<<::memplan::blocks(n, 256), 256>>>(d, n as i32);
            }
        }
    };
}
