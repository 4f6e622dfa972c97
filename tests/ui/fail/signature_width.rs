// `n: u64` against the C++ `int`: the driver would copy 8 bytes into a
// 4-byte slot.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i64) from memplan_kernels::ADD_ONE;
    }
}

fn main() {}
