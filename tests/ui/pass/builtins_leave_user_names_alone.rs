// `blocks(n, per_block)` in a launch configuration is memplan's; a function
// of the user's called `blocks` with one argument stays the user's, and so
// does a parameter called `blocks`.
#![deny(warnings)]

use memplan::memplan;

fn blocks(n: usize) -> u32 {
    n.div_ceil(128) as u32
}

memplan! {
    plan UsersFunction(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        stream s;
        on s {
            fill d with 1.0;
            launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
            launch process_data<<<blocks(n), 128>>>(d, n as i32);
        }
    }

    plan UsersParameter(n: usize, blocks: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        stream s;
        on s {
            fill d with 1.0;
            launch process_data<<<blocks(n, 256), 256>>>(d, blocks as i32);
        }
    }
}

fn main() {
    let _ = UsersFunction::new;
    let _ = UsersParameter::new;
}
