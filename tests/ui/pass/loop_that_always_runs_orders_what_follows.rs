// The only thing ordering the download after the upload is a record and a
// wait in the loop's body. With a count of at least 1 for every size the
// body always runs, so they order the two (compare
// fail/loop_order_needs_an_iteration.rs, whose `0..k` may run none).
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Counted(n: usize, k: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   h: [f32; n] pinned, out: [f32; n] pinned;
        device d: [f32; n];
        stream a, b;
        event  e;
        on a { copy h -> d; }
        for c in 0..k / 4 + 1 {
            on a { launch process_data<<<blocks(n, 256), 256>>>(d, n as i32); record e; }
            on b { wait e; }
        }
        on b { copy d -> out; }
    }

    plan Twice(n: usize) {
        host   h: [f32; n] pinned, out: [f32; n] pinned;
        device d: [f32; n];
        stream a, b;
        event  e[2];
        on a { copy h -> d; }
        for c in 0..2 {
            on a { record e[c % 2]; }
            on b { wait e[c % 2]; }
        }
        on b { copy d -> out; }
    }
}

fn main() {
    let _ = (Counted::new, Twice::new);
}
