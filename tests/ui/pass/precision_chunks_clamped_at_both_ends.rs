// A fixed number of chunks, `k`, given once, over runs of any length up to
// `cap`: each chunk is clamped at both ends by the run's length, so chunks
// past its end are empty, and each goes through a ring of two `m`-element
// slots. A chunk is never longer than its slot: where `c * m <= len` it is
// at most `m`, elsewhere it is empty. The checks prove it case by case,
// one case for each value a `min` may take.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Clamped(cap: usize, m: usize, k: usize, run len: usize <= cap) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; cap] pinned, output: [f32; cap] pinned;
        device slot[2]: [f32; m];
        stream lanes[2];
        for c in 0..k {
            let chunk = min(c * m, len)..min(c * m + m, len);
            let used = 0..chunk.len();
            on lanes[c % 2] {
                copy input[chunk] -> slot[c % 2][used];
                launch process_data<<<blocks(chunk.len(), 256), 256>>>(slot[c % 2][used], chunk.len() as i32);
                copy slot[c % 2][used] -> output[chunk];
            }
        }
    }
}

fn main() {
    let _ = Clamped::new;
}
