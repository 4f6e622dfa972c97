// Atomic updates from two streams need no order between them, but the read
// of their result does: `right` may still be adding when `left` copies the
// total out.
use memplan::memplan;

memplan! {
    plan Total(n: usize) {
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
        on left {
            copy sum -> total;
        }
        sync all;
    }
}

fn main() {}
