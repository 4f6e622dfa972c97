// Hole 1: the module that invokes `memplan!` sees the plan's private
// field, but nothing behind it: the engine's buffers, streams and in-flight
// flag are the runtime's private fields. (Making an engine from parts is
// `unsafe`: see `sound_engine_needs_unsafe`.)
#![forbid(unsafe_code)]

use memplan::memplan;

memplan! {
    pub plan AddOne(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   data: [f32; n] pinned;
        device on_gpu: [f32; n];
        stream work;
        on work {
            copy data -> on_gpu;
            launch process_data<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
            copy on_gpu -> data;
        }
    }
}

fn reach_in(plan: &mut AddOne) {
    // The plan's buffers are not its fields...
    let _ = &plan.data;
    // ...and the engine's fields are private to the runtime.
    let _ = &plan.0.runner;
    let _ = &plan.0.state;
}

fn main() {}
