// A write on one stream and a read on another, ordered by an event.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Handoff(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host a: [f32; n] pinned, b: [f32; n] pinned;
        device d: [f32; n];
        stream producer, consumer;
        event produced;
        on producer {
            copy a -> d;
            launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
            record produced;
        }
        on consumer {
            wait produced;
            copy d -> b;
        }
    }
}

fn main() {
    let _ = Handoff::new;
}
