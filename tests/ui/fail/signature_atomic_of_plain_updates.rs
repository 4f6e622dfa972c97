// `&atomic` for a parameter the kernel's source updates with plain reads
// and writes (`MEMPLAN_UPDATES`): the declaration would let two launches
// update it at once.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel process_data(data: &atomic [f32; n], n: i32) from memplan_kernels::ADD_ONE;
    }
}

fn main() {}
