// A host step reads results after `sync all`, and a second round of GPU
// work reuses the buffers the first one wrote.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan TwoRounds(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host data: [f32; n] pinned, total: [f32; 1] pinned;
        device d: [f32; n];
        stream work;
        on work {
            copy data -> d;
            launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
            copy d -> data;
        }
        sync all;
        host(&data, &mut total) {
            total[0] = data.iter().sum();
        }
        on work {
            copy data -> d;
            launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
            copy d -> data;
        }
    }
}

fn main() {
    let _ = TwoRounds::new;
}
