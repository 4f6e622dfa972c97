// Input of any length through a ring of `r` device buffers: chunk `c` in
// buffer `c % r`. Uploads run on one stream, kernels and downloads on the
// ring's streams; an upload into a buffer waits until the download of its
// previous chunk is done (`freed`), and a kernel waits for its upload
// (`loaded`).
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Ring(n: usize, m: usize, k: usize, r: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; n] pinned, output: [f32; n] pinned;
        device ring[r]: [f32; m];
        stream up, lanes[r];
        event  loaded[r], freed[r];
        for c in 0..k {
            on up {
                wait freed[c % r];
                copy input[c * m..min(c * m + m, n)] -> ring[c % r][..min(c * m + m, n) - c * m];
                record loaded[c % r];
            }
            on lanes[c % r] {
                wait loaded[c % r];
                launch process_data<<<blocks(min(c * m + m, n) - c * m, 256), 256>>>(
                    ring[c % r][..min(c * m + m, n) - c * m], (min(c * m + m, n) - c * m) as i32);
                copy ring[c % r][..min(c * m + m, n) - c * m] -> output[c * m..min(c * m + m, n)];
                record freed[c % r];
            }
        }
    }
}

fn main() {
    let _ = Ring::new;
}
