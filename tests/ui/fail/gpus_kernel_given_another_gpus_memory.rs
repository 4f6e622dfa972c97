// A kernel on GPU 1 given GPU 0's buffer, in a plan that does not declare
// `peer`: without peer access the kernel cannot reach it.
use memplan::memplan;

memplan! {
    plan Reach(n: usize) {
        gpus   gpu[2];
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n] on gpu[0], db: [f32; n] on gpu[1], dc: [f32; n] on gpu[1];
        stream zero on gpu[0], one on gpu[1];
        event  uploaded;
        on zero { copy a -> da; record uploaded; }
        on one {
            copy a -> db;
            wait uploaded;
            launch vadd<<<blocks(n, 256), 256>>>(da, db, dc, n as i32);
            copy dc -> c;
        }
    }

    /// The same in a loop: shard `i` on GPU `i`, given to the kernel on
    /// the stream of GPU `i + 1`'s.
    plan Shifted(n: usize, g: usize) {
        gpus   gpu[g];
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device part[g]: [f32; n] on gpu;
        stream s[g] on gpu;
        for i in 0..g - 1 {
            on s[i + 1] {
                fill part[i] with 0.0;
                launch process_data<<<blocks(n, 256), 256>>>(part[i], n as i32);
            }
        }
    }
}

fn main() {}
