// Hole 3: memory reaches a kernel only as a buffer argument, which the
// checks track. A value parameter is plain data (`KernelValue`): a device
// pointer, which carries no lifetime, is not, and a struct of the user's
// is only once its author vouches for it with `unsafe impl`. (The kernels
// are `unsafe kernel`, declared without checking against the C++, so that
// only the value check is what fails.)

use memplan::memplan;

#[repr(C)]
#[derive(Clone, Copy)]
struct Window {
    width: u32,
    height: u32,
}

memplan! {
    plan Smuggle(n: usize, theirs: memplan::DevicePtr<f32>, window: Window) {
        unsafe kernel by_pointer(data: &mut [f32], other: memplan::DevicePtr<f32>) from memplan_kernels::ADD_ONE;
        unsafe kernel by_struct(data: &mut [f32], window: Window) from memplan_kernels::ADD_ONE;
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
