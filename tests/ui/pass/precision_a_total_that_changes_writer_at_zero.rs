// An exclusive prefix sum's total: `sums[0]` is 0 and the kernel writes
// `sums[1..m + 1]`, so the total, `sums[m]`, is the fill's when `m` is 0
// and the kernel's otherwise. Either way something wrote it before it is
// read.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Total(m: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; m] pinned, total: [f32; 1] pinned;
        device sums: [f32; m + 1];
        stream s;
        on s {
            fill sums[0..1] with 0.0;
            copy input -> sums[1..m + 1];
            launch process_data<<<blocks(m, 256), 256>>>(sums[1..m + 1], m as i32);
            copy sums[m..m + 1] -> total;
        }
    }
}

fn main() {
    let _ = Total::new;
}
