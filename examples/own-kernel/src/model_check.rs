//! The blur's plan checked against a model of an H100 (`sm_90`), on any
//! machine: `Blur::check` makes every check `Blur::new` makes that needs
//! no GPU, with the errors `new` would give, and allocates nothing.

use super::{Blur, COUNT, HEIGHT, WIDTH};
use memplan::DeviceModel;

fn hopper() -> DeviceModel {
    DeviceModel::named("sm_90").expect("memplan has a model of sm_90")
}

#[test]
fn the_batch_main_blurs_passes_on_an_sm_90_gpu() {
    Blur::check(&hopper(), WIDTH, HEIGHT, COUNT).unwrap();
}

/// A mistake no compile-time check can see (the sizes are the caller's),
/// and one a GPU would hide: `new` would first ask it for the 2 TiB the
/// batch takes and fail there, out of memory. The model check names the
/// launch that could never run.
#[test]
fn a_grid_beyond_the_gpus_limit_is_refused_without_a_gpu() {
    // 128 images of 65536 x 65536 pixels: 2^39 pixels in blocks of 256
    // is 2^31 blocks, one more than a grid's x dimension can have.
    let error = Blur::check(&hopper(), 65_536, 65_536, 128).unwrap_err();
    assert_eq!(error.operation(), "launch box_blur");
    let text = error.to_string();
    assert!(text.starts_with("plan Blur: launch box_blur at src/main.rs:"), "{text}");
    assert!(
        text.ends_with("the grid's x dimension is 2147483648, above an sm_90 GPU's 2147483647"),
        "{text}"
    );
}

/// The kernel takes `int width`: a width that does not fit one reaches it
/// wrapped, and `blur.cu`'s extents, written with it, would be wrong.
#[test]
fn a_width_the_kernels_int_cannot_hold_is_refused() {
    let width = (1usize << 32) + 640;
    let error = Blur::check(&hopper(), width, 1, 1).unwrap_err();
    assert_eq!(error.operation(), "launch box_blur");
    let text = error.to_string();
    assert!(
        text.contains("`width` is 640 as the kernel receives it, cast from 4294967936"),
        "{text}"
    );
}
