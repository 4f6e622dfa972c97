// Declared and never used: warnings, here denied to make them visible.
#![deny(deprecated)]

use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host a: [f32; n] pinned;
        device d: [f32; n], spare: [f32; n];
        stream used, idle;
        event never;
        on used {
            fill d with 0.0;
        }
        host(&mut a) { a[0] = 1.0; }
    }
}

fn main() {}
