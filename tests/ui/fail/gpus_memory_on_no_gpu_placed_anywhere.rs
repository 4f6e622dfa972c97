// Host and stream-ordered memory are on no GPU: placing them is one error,
// whatever the plan declares (no GPUs, or GPUs without a count) and
// whatever the placement names (GPUs of another name, an index that is no
// size).
use memplan::memplan;

memplan! {
    plan NoGpus(n: usize) {
        host   a: [f32; n] pinned on gpu[0];
        device d: [f32; n];
        stream s;
        on s {
            alloc t: [f32; n] on gpu[0];
            copy a -> d;
            copy d -> t;
            copy t -> a;
            free t;
        }
    }

    plan OtherGpus(n: usize, x: f32) {
        gpus   gpu[2];
        host   a: [f32; n] pinned on other[0], b: [f32; n] pinned on gpu[x];
        device d: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s { copy a -> d; copy d -> b; }
    }

    plan Uncounted(n: usize) {
        gpus   gpu;
        host   a: [f32; n] pinned on gpu[0];
        stream s;
        on s { fill a with 0.0; }
    }
}

fn main() {}
