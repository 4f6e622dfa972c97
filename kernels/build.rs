//! Compiles every `src/*.cu` with memplan-build, as a user's crate would:
//! each file becomes an `Image` named after it (`vector_add.cu` is
//! `VECTOR_ADD`), with its kernels' signatures. nvcc comes from
//! `MEMPLAN_CUDA_HOME`, which `.cargo/config.toml` points at the toolkit
//! `cargo xtask setup` provisions.

fn main() {
    // This crate depends on memplan-runtime, not on the `memplan` facade.
    memplan_build::Kernels::new()
        .runtime_path("::memplan_runtime")
        .build();
}
