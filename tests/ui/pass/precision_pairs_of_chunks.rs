// Chunks processed two at a time: `k / 2` iterations, each on a pair of
// chunks, `2 * c * m..(2 * c + 2) * m`, in a ring of two slots on two
// streams. Together the iterations write `(k / 2) * 2 * m` elements, which
// fit in `k * m` whether `k` is even or odd, and the download after the
// loop reads exactly those.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Pairs(m: usize, k: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; k * m] pinned, output: [f32; k * m] pinned;
        device data: [f32; k * m];
        device slot[2]: [f32; 2 * m];
        stream lanes[2], down;
        for c in 0..k / 2 {
            let pair = 2 * c * m..(2 * c + 2) * m;
            on lanes[c % 2] {
                copy input[pair] -> slot[c % 2];
                launch process_data<<<blocks(2 * m, 256), 256>>>(slot[c % 2], (2 * m) as i32);
                copy slot[c % 2] -> data[pair];
            }
        }
        sync lanes;
        on down {
            copy data[..(k / 2) * 2 * m] -> output[..(k / 2) * 2 * m];
        }
    }
}

fn main() {
    let _ = Pairs::new;
}
