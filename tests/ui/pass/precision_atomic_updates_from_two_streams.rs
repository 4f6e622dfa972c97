// Two kernels on two streams add into one total with `atomicAdd`: their
// source says so (`MEMPLAN_ATOMIC(1)`), the declaration restates it
// (`&atomic`), and two atomic updates need no order between them. The
// fill before them and the read after them do: an event and a `sync`.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Total(n: usize) {
        kernel sum_u32(data: &[u32; n], sum: &atomic [u64; 1], n: i32) from memplan_kernels::CHECKS;
        host   input: [u32; 2 * n] pinned, total: [u64; 1] pinned;
        device data: [u32; 2 * n], sum: [u64; 1];
        stream left, right;
        event  ready;
        on left {
            copy input -> data;
            fill sum with 0;
            record ready;
            launch sum_u32<<<blocks(n, 256), 256>>>(data[..n], sum, n as i32);
        }
        on right {
            wait ready;
            launch sum_u32<<<blocks(n, 256), 256>>>(data[n..], sum, n as i32);
        }
        sync all;
        copy sum -> total;
    }
}

fn main() {
    let _ = Total::new;
}
