// Reading part of a buffer that earlier ops wrote all of: one element at
// the start, one at the end, a prefix longer than half. `new` refuses a
// range outside its buffer before anything runs, so the check may assume
// each range lies inside (for `d[0..1]`, that `n >= 1`).
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Ends(n: usize, input: &[f32; n] registered) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   first: [f32; 1] pinned, last: [f32; 1] pinned;
        device d: [f32; n], e: [f32; n];
        stream s;
        on s {
            copy input -> d;
            copy d[0..n / 2 + 1] -> e[0..n / 2 + 1];
            launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
            copy d[0..1] -> first;
            copy d[n - 1..n] -> last;
            copy e[..=n / 2] -> d[..=n / 2];
        }
    }
}

fn main() {
    let _ = Ends::new;
}
