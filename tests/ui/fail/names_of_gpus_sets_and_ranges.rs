// Names that leave nothing to check: the GPUs declared twice or without a
// count, `peer` of GPUs the plan does not have, a set indexed two ways in
// one loop, a range the loop does not name.
use memplan::memplan;

memplan! {
    plan TwoGpus(n: usize, g: usize) {
        gpus   gpu[g];
        gpus   other[g];
        peer   other;
        host   a: [f32; n] pinned;
        device d: [f32; n] on gpu[0];
        stream s on gpu[0];
        on s { copy a -> d; copy d -> a; }
    }

    plan Uncounted(n: usize) {
        gpus   gpu;
        host   a: [f32; n] pinned;
        stream s;
        on s { fill a with 0.0; }
    }

    plan Indexes(n: usize, m: usize, k: usize, r: usize) {
        host   a: [f32; n] pinned;
        device ring[r]: [f32; m];
        stream s;
        for c in 0..k {
            let chunk = c * m..(c + 1) * m;
            on s {
                copy a[chunk] -> ring[c % r];
                copy ring[c % r][part] -> a[chunk];
                copy ring[(c + 1) % r] -> a[chunk];
            }
        }
    }
}

fn main() {}
