// A loop whose chunks end at a run length, in buffers of a capacity: without
// `len <= cap` stated, the chunks may leave the buffers; the help offers the
// bound (applied, it is `precision_run_length_within_capacity.rs`).
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Stream(cap: usize, m: usize, s: usize, run len: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; cap] pinned, output: [f32; cap] pinned;
        device work: [f32; cap];
        stream lanes[s];
        for c in 0..(len + m - 1) / m {
            on lanes[c % s] {
                copy input[c * m..min(c * m + m, len)] -> work[c * m..min(c * m + m, len)];
                launch process_data<<<blocks(min(c * m + m, len) - c * m, 256), 256>>>(
                    work[c * m..min(c * m + m, len)], (min(c * m + m, len) - c * m) as i32);
                copy work[c * m..min(c * m + m, len)] -> output[c * m..min(c * m + m, len)];
            }
        }
    }
}

fn main() {
    let _ = Stream::new;
    let _ = Stream::run;
}
