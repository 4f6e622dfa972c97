// The help of `computed_once_reads_what_changes.rs`, applied: a launch
// dimension that changes from run to run, written as a size.
use memplan::memplan;

memplan! {
    plan GridOfEachRun(cap: usize, run len: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; cap];
        stream s;
        on s {
            fill d with 0.0;
            launch process_data<<<blocks(len, 256), 256>>>(d, cap as i32);
        }
    }
}

fn main() {}
