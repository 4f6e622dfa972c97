// Hole 6: the driver follows every offset inside a module image, so safe
// code loads only an `Image`, which build steps make (see
// `sound_module_bytes_need_unsafe` for bytes of other origins).
#![forbid(unsafe_code)]

use memplan::{Context, Module, Result};

fn load(context: &Context, bytes: &'static [u8]) -> Result<()> {
    Module::from_image(context, bytes)?;
    Ok(())
}

fn main() {}
