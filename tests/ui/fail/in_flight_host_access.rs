// Host code may not touch a plan's buffers while an enqueued run is in
// flight: the guard borrows the plan.
use memplan::memplan;

memplan! {
    plan AddOne(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host data: [f32; n] pinned;
        device on_gpu: [f32; n];
        stream work;
        on work {
            copy data -> on_gpu;
            launch process_data<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
            copy on_gpu -> data;
        }
    }
}

fn main() -> memplan::Result<()> {
    let ctx = memplan::Context::new(0)?;
    let mut plan = AddOne::new(&ctx, 1024)?;
    let in_flight = plan.enqueue()?;
    let first = plan.host().data[0]; // the GPU may still be writing `data`
    in_flight.wait()?;
    println!("{first}");
    Ok(())
}
