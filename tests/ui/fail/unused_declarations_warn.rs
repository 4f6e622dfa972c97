// Declared and never used: rustc's own warnings at the declarations, here
// denied to make them visible. A name written `_idle` is unused on purpose,
// and a name of the prelude or of the module (`None`, `A`) is a
// declaration's like any other.
#![deny(unused)]

use memplan::memplan;

#[allow(dead_code)]
const A: u32 = 1;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host a: [f32; n] pinned;
        device d: [f32; n], spare: [f32; n], A: [f32; n], None: [f32; n];
        stream used, idle, _idle_on_purpose;
        event never;
        on used {
            fill d with 0.0;
        }
        host(&mut a) { a[0] = 1.0; }
    }

    // Allowed on the plan: none of its unused declarations is an error.
    #[allow(unused)]
    plan Allowed(n: usize) {
        kernel declared(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE as "process_data";
        device spare: [f32; n];
        stream idle;
    }
}

fn main() {}
