// memplan-runtime by hand: mapped host memory has a device address, but it
// is also a host slice, so the safe copies do not take it as device memory
// (they would write it through a shared borrow).
use memplan::{Context, HostAlloc, PinnedBuffer, copy};

fn main() -> memplan::Result<()> {
    let ctx = Context::new(0)?;
    let mapped = PinnedBuffer::<f32>::with_flags(&ctx, 1024, HostAlloc::MAPPED)?;
    let view: &[f32] = &mapped;
    copy::htod(&[1.0f32; 1024][..], .., &mapped, ..).ok();
    println!("{}", view[0]);
    Ok(())
}
