// Compiles src/blur.cu with nvcc; `memplan::include_kernels!()` embeds it.
fn main() {
    memplan_build::Kernels::new().build();
}
