// memplan-runtime by hand: a buffer a queued copy reads cannot be dropped
// before the scope has waited for the copy.
use memplan::{Context, DeviceBuffer, PinnedBuffer, Stream, scope};

fn main() -> memplan::Result<()> {
    let ctx = Context::new(0)?;
    let stream = Stream::new(&ctx)?;
    let device = DeviceBuffer::<f32>::new(&ctx, 1024)?;
    let upload = PinnedBuffer::<f32>::new(&ctx, 1024)?;
    scope(|s| {
        s.copy(&stream, &upload, &device)?;
        drop(upload); // the DMA engine may still be reading it
        Ok(())
    })
}
