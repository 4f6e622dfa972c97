// A stream of batches of at most `cap` elements: each run gives its length,
// `len <= cap`, and the loop's last chunk ends at `len`. The bound is what
// lets the checks prove every chunk inside the `cap`-element buffers (`run`
// refuses a length above it, naming `len`); chunks on the ring's streams
// are apart because they are disjoint.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Stream(cap: usize, m: usize, s: usize, run len: usize <= cap) {
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
