// Placements that say nothing or the wrong thing: an unplaced stream and
// buffer in a plan on several GPUs, `on gpu` for one stream, a host buffer
// placed, a placement without `gpus`, a launch outside stream blocks, a
// copy whose device memory is on another GPU than its stream,
// placements by sizes of a run (`new` places buffers and streams once),
// and placements past the GPUs declared (`gpu[2]` of two, `gpu[g]` of `g`).
use memplan::memplan;

memplan! {
    plan Unplaced(n: usize) {
        gpus   gpu[2];
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   x: [f32; n] pinned on gpu[0];
        device d: [f32; n], e: [f32; n] on gpu[1];
        stream s, t on gpu;
        on s { copy x -> d; }
        on t { copy d -> e; }
    }

    plan NoGpus(n: usize) {
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[0];
        stream s;
        on s { copy x -> d; copy d -> x; }
    }

    plan FarCopy(n: usize) {
        gpus   gpu[2];
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[1];
        stream s on gpu[0];
        on s { copy x -> d; copy d -> x; }
        sync s;
        launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
    }

    plan PlacedAtEachRun(n: usize, g: usize, run first: usize, xs: &[f32]) {
        gpus   gpu[g];
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[first], e: [f32; n] on gpu[xs.len() % g];
        stream s on gpu[first + 1];
        on s { copy x -> d; copy d -> e; copy e -> x; }
    }

    plan PastTheGpus(n: usize, g: usize) {
        gpus   gpu[g];
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[g], e: [f32; n] on gpu[g - 1];
        stream s on gpu[g + 1], t on gpu[0];
        on t { copy x -> e; }
        on s { copy x -> d; }
    }

    plan PastTwo(n: usize) {
        gpus   gpu[2];
        host   x: [f32; n] pinned;
        device d: [f32; n] on gpu[2];
        stream s on gpu[1];
        on s { copy x -> d; }
    }
}

fn main() {}
