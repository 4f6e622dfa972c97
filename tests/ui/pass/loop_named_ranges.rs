// A loop's named ranges: `a[r]`, `ring[c % q][used]`, `r.len()` in launch
// dimensions and arguments, and a range named with another.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Pipelined(n: usize, m: usize, k: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream up, add, down;
        event  loaded, added;
        for i in 0..k {
            let r = i * m..min(i * m + m, n);
            on up   { copy a[r] -> da[r]; copy b[r] -> db[r]; record loaded; }
            on add  { wait loaded; launch vadd<<<blocks(r.len(), 256), 256>>>(da[r], db[r], dc[r], r.len() as i32); record added; }
            on down { wait added; copy dc[r] -> c[r]; }
        }
    }

    pub plan OutOfCore(n: usize, m: usize, k: usize, q: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; n] pinned, output: [f32; n] pinned;
        device ring[q]: [f32; m];
        stream up, lanes[q];
        event  loaded[q], freed[q];
        for c in 0..k {
            let chunk = c * m..min(c * m + m, n);
            let used = 0..chunk.len();
            on up { wait freed[c % q]; copy input[chunk] -> ring[c % q][used]; record loaded[c % q]; }
            on lanes[c % q] {
                wait loaded[c % q];
                launch process_data<<<blocks(chunk.len(), 256), 256>>>(ring[c % q][used], chunk.len() as i32);
                copy ring[c % q][used] -> output[chunk];
                record freed[c % q];
            }
        }
    }
}

fn main() {
    let _ = (Pipelined::new, OutOfCore::new);
}
