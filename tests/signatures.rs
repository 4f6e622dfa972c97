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
