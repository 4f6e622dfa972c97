// `new` allocates each buffer, makes each set and counts the GPUs once: a
// size of these that a run gives (`run r`) or measures (`xs.len()`) is one
// error each, at what the run gives.
use memplan::memplan;

memplan! {
    plan Sets(n: usize, run r: usize, xs: &[f32]) {
        host   a: [f32; n] pinned;
        device ring[r]: [f32; n];
        stream lanes[xs.len()];
        event  done[r];
        for c in 0..4 {
            on lanes[c % xs.len()] {
                copy a -> ring[c % r];
                record done[c % r];
            }
        }
    }

    plan Measured(xs: &[f32]) {
        host   a: [f32; xs.len()] pinned;
        device d: [f32; xs.len()];
        stream s;
        on s { copy a -> d; copy d -> a; }
    }

    plan Gpus(n: usize, xs: &[f32]) {
        gpus   gpu[xs.len()];
        host   a: [f32; n] pinned;
        device d: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s { copy a -> d; copy d -> a; }
    }
}

fn main() {}
