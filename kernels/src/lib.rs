//! The CUDA C++ kernels of memplan's examples and tests.
//!
//! `build.rs` compiles every `src/*.cu` with nvcc into a fatbin (machine code
//! for sm_80 and sm_90, PTX for compute_90) and embeds it here as a constant
//! named after the file: `vector_add.cu` becomes [`VECTOR_ADD`], a
//! [`memplan_runtime::Image`]. Load one with `memplan::Module::from_fatbin`,
//! or its bytes with `cust::module::Module::from_fatbin`.
//!
//! ```
//! // Every fatbin starts with the fatbin magic number 0xBA55ED50.
//! assert_eq!(&memplan_kernels::VECTOR_ADD.bytes()[..4], &0xBA55ED50u32.to_le_bytes());
//! ```
#![no_std]

use memplan_runtime::Image;

/// The driver reads a fatbin's header as 8-byte words, so the bytes must be
/// aligned; `include_bytes!` alone guarantees only 1-byte alignment.
#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
