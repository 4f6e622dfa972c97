// One result per chunk of a run of `len <= cap` elements, in a buffer sized
// by the run's chunk count, and a scratch buffer each run allocates at the
// run's length: `new` fixes both lengths. The help sizes each by what it
// is for the largest `len`, from the bound the plan states.
use memplan::memplan;

memplan! {
    plan ChunkSums(cap: usize, m: usize, run len: usize <= cap) {
        kernel sum_u32(data: &[u32; n], sum: &mut [u64; 1], n: i32) from memplan_kernels::CHECKS;
        host   input: [u32; cap] pinned, sums: [u64; (len + m - 1) / m] pinned;
        device work: [u32; cap], slot: [u64; 1];
        stream s;
        for c in 0..(len + m - 1) / m {
            on s {
                copy input[c * m..min(c * m + m, len)] -> work[c * m..min(c * m + m, len)];
                fill slot with 0;
                launch sum_u32<<<1, 256>>>(work[c * m..min(c * m + m, len)], slot, (min(c * m + m, len) - c * m) as i32);
                copy slot -> sums[c..c + 1];
            }
        }
        on s {
            alloc scratch: [u32; len];
            copy input[..len] -> scratch;
            free scratch;
        }
    }
}

fn main() {}
