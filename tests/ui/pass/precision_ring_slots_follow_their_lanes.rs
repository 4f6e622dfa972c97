// A ring of `2 * s` device slots on `s` streams: chunk `c` in slot
// `c % (2 * s)` on stream `c % s`. Two chunks that share a slot are `2 * s`
// (a multiple of `s`) apart, so they share a stream too, which orders
// them: no event is needed.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Ring(m: usize, k: usize, s: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; k * m] pinned, output: [f32; k * m] pinned;
        device slot[2 * s]: [f32; m];
        stream lanes[s];
        for c in 0..k {
            on lanes[c % s] {
                copy input[c * m..c * m + m] -> slot[c % (2 * s)];
                launch process_data<<<blocks(m, 256), 256>>>(slot[c % (2 * s)], m as i32);
                copy slot[c % (2 * s)] -> output[c * m..c * m + m];
            }
        }
    }
}

fn main() {
    let _ = Ring::new;
}
