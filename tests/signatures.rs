//! The signatures memplan-build writes for `memplan!` to read (the macro
//! words a declaration's error with them) are the ones it compiles into
//! the images, which decide: read back, they are equal, image by image.

use memplan_macros_core::signatures::Built;

#[test]
fn the_signatures_file_lists_what_the_images_hold() {
    let built = Built::parse(memplan_kernels::SIGNATURES_FILE).expect("the file parses");
    for (name, image) in memplan_kernels::ALL_MODULES {
        let read = built.image(name);
        match image.kernels() {
            Some(kernels) if !image.is_unbuilt() => {
                let read = read.unwrap_or_else(|| panic!("{name} is not in the file"));
                assert_eq!(format!("{read:?}"), format!("{kernels:?}"), "{name}");
            }
            // Built without nvcc: it accepts every declaration, and the
            // file does not list it.
            _ => assert!(read.is_none(), "{name}"),
        }
    }
}

/// memplan-build proves from the PTX which kernels wait for the work
/// before them first: memplan-kernels' saxpy does, on sm_90 and in its
/// compute_90 PTX (sm_80 has no such wait); a kernel that reads memory
/// before it waits, and one that never waits, are not proved.
#[test]
fn the_images_say_which_kernels_wait_first() {
    let waits = |image: &memplan::Image, symbol: &str| {
        let kernels = image.kernels().expect("built by memplan-build");
        let kernel = kernels.iter().find(|k| k.symbol == symbol);
        kernel.unwrap_or_else(|| panic!("no {symbol}")).waits_first
    };
    let saxpy = waits(&memplan_kernels::SAXPY, "saxpy");
    assert_eq!(saxpy.machine_code, [(80, false), (90, true)]);
    assert_eq!(saxpy.ptx, [(90, true)]);
    assert!(saxpy.on(90) && saxpy.on(100) && !saxpy.on(80));
    for (image, symbol) in [
        (&memplan_kernels::CHECKS, "reads_then_waits"),
        (&memplan_kernels::VECTOR_ADD, "vadd"),
    ] {
        let forms = waits(image, symbol);
        assert!(
            forms.machine_code.iter().chain(forms.ptx).all(|&(_, w)| !w) && !forms.on(90),
            "{symbol}: {forms:?}"
        );
    }
}
