// Hole 5: a scope keeps its own account of which stream's work is ordered
// after which, to refuse unordered access to a lent buffer. An event it
// recorded stays lent to it while the mark lives, so no code can record
// the event elsewhere and make the account wrong.
#![forbid(unsafe_code)]

use memplan::{Context, DeviceBuffer, Event, PinnedBuffer, Result, Stream, scope};

fn reorder(context: &Context) -> Result<()> {
    let (first, second) = (Stream::new(context)?, Stream::new(context)?);
    let mut loaded = Event::new(context)?;
    let mut host = PinnedBuffer::<f32>::new(context, 16)?;
    let device = DeviceBuffer::<f32>::new(context, 16)?;
    scope(|s| {
        let lent = s.lend(&mut host);
        s.copy(&first, lent, &device)?;
        let copied = s.record(&mut loaded, &first)?;
        loaded.record(&second)?;
        s.wait(&second, copied)?;
        s.copy(&second, &device, lent)
    })
}

fn main() {}
