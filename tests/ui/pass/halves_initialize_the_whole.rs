// Two copies write the two halves of a device buffer; a kernel then reads
// all of it: the written ranges cover the read, so nothing is uninitialized.
// Also: a synchronous launch, a borrowed and registered output, and a
// plan-level value parameter.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Assemble(n: usize, first: &[f32; n / 2], out: &mut [f32; n] registered) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host rest: [f32; n - n / 2] pinned;
        device d: [f32; n];
        stream s;
        copy first -> d[..n / 2];
        on s {
            copy rest -> d[n / 2..];
        }
        sync s;
        launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
        on s {
            copy d -> out;
        }
    }
}

fn main() {
    let _ = Assemble::new;
    let _ = Assemble::run;
}
