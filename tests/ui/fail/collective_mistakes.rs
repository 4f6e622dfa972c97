// Collectives need ranks, device memory of their stream's GPU and a type
// NCCL knows; and they are queued on streams.
use memplan::memplan;

memplan! {
    plan NoRanks(n: usize) {
        device grads: [f32; n];
        stream s;
        on s { fill grads with 0.0; all_reduce sum grads; }
    }
}

memplan! {
    plan Mistakes(n: usize, g: usize) {
        gpus   gpu[g];
        host   x: [f32; n] pinned;
        device a[g]: [f32; n] on gpu, b[g]: [u16; n] on gpu, c[g]: [f64; n] on gpu, far: [f32; n] on gpu[1];
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                fill a[i] with 0.0;
                all_reduce sum x;
                all_reduce sum b[i];
                all_reduce sum a[i] -> c[i];
                all_reduce sum far;
            }
        }
    }
}

memplan! {
    plan Outside(n: usize) {
        ranks  world;
        device grads: [f32; n];
        stream s;
        on s { fill grads with 0.0; }
        all_reduce sum grads;
    }
}

memplan! {
    plan Both(n: usize, g: usize) {
        gpus   gpu[g];
        ranks  world;
        device grads[g]: [f32; n] on gpu;
    }
}

memplan! {
    plan Words(n: usize) {
        ranks  world;
        device a: [f32; n], b: [f32; n];
        stream s;
        on s { fill a with 0.0; all_reduce mean a; }
    }
}



memplan! {
    /// A send and a receive of one group run at once: receiving into the
    /// buffer being sent is a race.
    plan Ring(n: usize, g: usize) {
        gpus   gpu[g];
        device a[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g {
            on s[i] {
                fill a[i] with 0.0;
                send a[i] to (i + 1) % g;
                recv a[i] from (i + g - 1) % g;
            }
        }
    }
}
fn main() {}
