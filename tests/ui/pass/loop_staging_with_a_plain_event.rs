// One staging buffer for every chunk: an upload waits (`done`) until the
// previous chunk's download has read the buffer. `done` is a plain event
// the body waits for before recording it, so each iteration waits for the
// one before, and so on back: no two iterations race.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Staged(n: usize, m: usize, k: usize, s: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; n] pinned, output: [f32; n] pinned;
        device stage: [f32; m];
        stream up, lanes[s];
        event  loaded, done;
        for c in 0..k {
            let chunk = c * m..min(c * m + m, n);
            on up { wait done; copy input[chunk] -> stage[..chunk.len()]; record loaded; }
            on lanes[c % s] {
                wait loaded;
                launch process_data<<<blocks(chunk.len(), 256), 256>>>(stage[..chunk.len()], chunk.len() as i32);
                copy stage[..chunk.len()] -> output[chunk];
                record done;
            }
        }
    }
}

fn main() {
    let _ = Staged::new;
}
