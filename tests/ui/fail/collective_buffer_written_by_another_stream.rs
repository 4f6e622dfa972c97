// A stream of GPU i fills the buffer that GPU i's part of an all-reduce
// reads and writes, and no event orders the fill before the collective:
// NCCL may read the buffer while the fill writes it.
use memplan::memplan;

memplan! {
    plan Reduce(n: usize, g: usize) {
        gpus   gpu[g];
        host   y: [f32; n * g] pinned;
        device grads[g]: [f32; n] on gpu;
        stream s[g] on gpu, zero[g] on gpu;
        for i in 0..g {
            on zero[i] { fill grads[i] with 1.0; }
            on s[i] {
                all_reduce sum grads[i];
                copy grads[i] -> y[i * n..i * n + n];
            }
        }
    }
}

fn main() {}
