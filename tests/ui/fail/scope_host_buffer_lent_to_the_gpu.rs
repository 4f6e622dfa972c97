// memplan-runtime by hand: a host buffer that a queued copy writes stays
// lent to the GPU until the scope has waited, so reading it inside the
// scope does not compile.
use memplan::{Context, DeviceBuffer, PinnedBuffer, Stream, scope};

fn main() -> memplan::Result<()> {
    let ctx = Context::new(0)?;
    let stream = Stream::new(&ctx)?;
    let device = DeviceBuffer::<f32>::zeroed(&ctx, 1024)?;
    let mut results = PinnedBuffer::<f32>::new(&ctx, 1024)?;
    scope(|s| {
        s.copy(&stream, &device, &mut results)?;
        println!("{}", results[0]); // the copy may not have happened yet
        Ok(())
    })
}
