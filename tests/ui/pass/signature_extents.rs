// Extents: the kernel touches `n` elements of each buffer from its start,
// and the checks track that much. A kernel that writes the first half of
// `d` on one stream while a fill writes the second half on another does
// not race; the read after both covers all of `d`.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Halves(half: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   out: [f32; 2 * half] pinned;
        device d: [f32; 2 * half];
        stream a, b;
        event filled;
        on a {
            fill d[..half] with 1.0;
            launch process_data<<<blocks(half, 256), 256>>>(d, half as i32);
        }
        on b {
            fill d[half..] with 2.0;
            record filled;
        }
        on a {
            wait filled;
            copy d -> out;
        }
    }

    plan Sum(n: usize, a: &[f32; n] registered, c: &mut [f32; n] registered) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32)
            from memplan_kernels::VECTOR_ADD;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream s;
        on s {
            copy a -> da;
            copy a -> db;
            launch vadd<<<blocks(n, 256), 256>>>(da, db, dc, n as i32);
            copy dc -> c;
        }
    }

    /// An extent the arithmetic cannot judge (`n` elements from the middle
    /// of `n`) compiles, and `new` checks it.
    plan Middle(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        fill d with 0.0;
        launch process_data<<<blocks(n, 256), 256>>>(d[n / 2..], n as i32);
    }
}

fn main() {
    let _ = (Halves::new, Sum::new, Middle::new);
}
