// `new` allocates buffers once, so a size each run gives cannot be a
// buffer's length: the buffer is sized by a capacity, and runs use a
// range of it.
use memplan::memplan;

memplan! {
    plan Batch(run len: usize) {
        host   x: [f32; len] pinned;
        device dx: [f32; len];
        stream s;
        on s { copy x -> dx; }
    }
}

fn main() {}
