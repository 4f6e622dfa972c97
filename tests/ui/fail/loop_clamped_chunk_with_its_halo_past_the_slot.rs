// A stencil's chunk with one element of halo, clamped at both ends by the
// run's length, uploaded into a slot of `m`: where the chunk is not the
// last, it is `m + 1` long. The slot needs `m + 1` elements.
use memplan::memplan;

memplan! {
    pub plan Halo(cap: usize, m: usize, k: usize, run len: usize <= cap) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; cap] pinned, output: [f32; cap] pinned;
        device slot[2]: [f32; m];
        stream lanes[2];
        for c in 0..k {
            let chunk = min(c * m, len)..min(c * m + m, len);
            let halo = min(c * m, len)..min(c * m + m + 1, len);
            on lanes[c % 2] {
                copy input[halo] -> slot[c % 2][..halo.len()];
                launch process_data<<<blocks(chunk.len(), 256), 256>>>(slot[c % 2][..chunk.len()], chunk.len() as i32);
                copy slot[c % 2][..chunk.len()] -> output[chunk];
            }
        }
    }
}

fn main() {}
