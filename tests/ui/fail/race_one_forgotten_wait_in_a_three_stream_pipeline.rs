// A pipeline of three streams, one per engine, with `wait done[c % r];`
// forgotten on `down`: the download may read a slot before the kernel is
// done with it, and the next upload into the slot may overwrite it before
// either is. One mistake, one error: its help is the forgotten `wait`, and
// its notes the other pairs of ops that `wait` orders.
use memplan::memplan;

memplan! {
    pub plan Engines(n: usize, m: usize, k: usize, r: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; n] pinned, output: [f32; n] pinned;
        device ring[r]: [f32; m];
        stream up, work, down;
        event  loaded[r], done[r], freed[r];
        for c in 0..k {
            let chunk = c * m..min(c * m + m, n);
            let used = 0..chunk.len();
            on up {
                wait freed[c % r];
                copy input[chunk] -> ring[c % r][used];
                record loaded[c % r];
            }
            on work {
                wait loaded[c % r];
                launch process_data<<<blocks(chunk.len(), 256), 256>>>(ring[c % r][used], chunk.len() as i32);
                record done[c % r];
            }
            on down {
                copy ring[c % r][used] -> output[chunk];
                record freed[c % r];
            }
        }
    }
}

fn main() {}
