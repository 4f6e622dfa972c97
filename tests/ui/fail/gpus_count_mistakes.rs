// GPU counts that can never run, or that change from run to run: a plan
// declared on zero GPUs (a literal, or a count that is 0 however it is
// written), and a count given at each run, which `new`, making the
// buffers and streams on the GPUs once, cannot know.
use memplan::memplan;

memplan! {
    plan OnNoGpus(n: usize) {
        gpus   gpu[0];
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s { copy x -> d; copy d -> x; }
    }

    plan OnNoGpusWrittenOut(n: usize) {
        gpus   gpu[n - n];
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s { copy x -> d; copy d -> x; }
    }

    plan CountedAtEachRun(n: usize, run g: usize) {
        gpus   gpu[g];
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s { copy x -> d; copy d -> x; }
    }
}

fn main() {}
