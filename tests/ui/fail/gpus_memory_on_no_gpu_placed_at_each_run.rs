// Host and stream-ordered memory are on no GPU: placing them is one
// error, whatever the placement reads (a `run` parameter here).
use memplan::memplan;

memplan! {
    plan Placed(n: usize, g: usize, run i: usize) {
        gpus   gpu[g];
        host   h: [f32; n] pinned on gpu[i];
        device d: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s {
            alloc t: [f32; n] on gpu[i];
            copy h -> t;
            copy t -> d;
            copy d -> h;
            free t;
        }
    }
}

fn main() {}
