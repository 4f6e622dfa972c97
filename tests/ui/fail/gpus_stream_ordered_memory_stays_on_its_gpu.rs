// Stream-ordered memory comes from its GPU's pool, which peer access does
// not open to other GPUs: a kernel on GPU 1 may not be given GPU 0's, even
// with `peer`, and it is freed on a stream of its own GPU.
use memplan::memplan;

memplan! {
    plan Pooled(n: usize) {
        gpus   gpu[2];
        peer   gpu;
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        stream a on gpu[0], b on gpu[1];
        event  filled, used;
        on a { alloc tmp: [f32; n]; fill tmp with 0.0; record filled; }
        on b {
            wait filled;
            launch process_data<<<blocks(n, 256), 256>>>(tmp, n as i32);
            record used;
        }
        on a { wait used; }
        on b { free tmp; }
    }
}

fn main() {}
