// Hole 3: memory reaches a kernel only as a buffer argument, which the
// checks track. A value parameter is plain data (`KernelValue`): a device
// pointer, which carries no lifetime, is not, and a struct of the user's
// is only once its author vouches for it with `unsafe impl`.
#![forbid(unsafe_code)]

use memplan::memplan;

#[repr(C)]
#[derive(Clone, Copy)]
struct Window {
    width: u32,
    height: u32,
}

memplan! {
    plan Smuggle(n: usize, theirs: memplan::DevicePtr<f32>, window: Window) {
        kernel by_pointer(data: &mut [f32], other: memplan::DevicePtr<f32>) from memplan_kernels::ADD_ONE;
        kernel by_struct(data: &mut [f32], window: Window) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        stream s;
        on s {
            fill d with 0.0;
            launch by_pointer<<<1, 1>>>(d, theirs);
            launch by_struct<<<1, 1>>>(d, window);
        }
    }
}

fn main() {}
