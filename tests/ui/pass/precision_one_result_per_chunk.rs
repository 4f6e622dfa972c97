// One result per chunk: each run sums its `len` elements in chunks of `m`,
// and downloads chunk `c`'s sum to `sums[c]`. `sums` holds as many as a
// batch of `cap` has chunks, `(cap + m - 1) / m`, and a run has
// `(len + m - 1) / m` of them: with `len <= cap`, no fewer, so every
// `sums[c..c + 1]` is inside it.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan ChunkSums(cap: usize, m: usize, run len: usize <= cap) {
        kernel sum_u32(data: &[u32; n], sum: &mut [u64; 1], n: i32) from memplan_kernels::CHECKS;
        host   input: [u32; cap] pinned, sums: [u64; (cap + m - 1) / m] pinned;
        device work: [u32; cap], slot: [u64; 1];
        stream s;
        for c in 0..(len + m - 1) / m {
            on s {
                copy input[c * m..min(c * m + m, len)] -> work[c * m..min(c * m + m, len)];
                fill slot with 0;
                launch sum_u32<<<1, 256>>>(
                    work[c * m..min(c * m + m, len)], slot, (min(c * m + m, len) - c * m) as i32);
                copy slot -> sums[c..c + 1];
            }
        }
    }
}

fn main() {
    let _ = ChunkSums::new;
    let _ = ChunkSums::run;
}
