// Hole 6: bytes of unknown origin load only through `unsafe`: as they
// are, or made into an `Image`. A crate that forbids `unsafe` can do
// neither.
#![forbid(unsafe_code)]

use memplan::{Context, Image, Module, Result};

fn load(context: &Context, bytes: &'static [u8]) -> Result<()> {
    Module::from_bytes(context, bytes)?;
    let image = Image::from_static(bytes);
    Module::from_image(context, &image)?;
    Ok(())
}

fn main() {}
