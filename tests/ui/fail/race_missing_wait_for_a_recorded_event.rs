use memplan::memplan;

// The second half is uploaded and its event recorded, but the compute stream
// never waits for it: the fix names the event that is already there.
memplan! {
    plan VectorAdd(n: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream upload, compute;
        event  first_half, second_half;
        on upload {
            copy a[..n / 2] -> da[..n / 2];
            copy b[..n / 2] -> db[..n / 2];
            record first_half;
            copy a[n / 2..] -> da[n / 2..];
            copy b[n / 2..] -> db[n / 2..];
            record second_half;
        }
        on compute {
            wait first_half;
            launch vadd<<<blocks(n / 2, 256), 256>>>(da[..n / 2], db[..n / 2], dc[..n / 2], (n / 2) as i32);
            copy dc[..n / 2] -> c[..n / 2];
            launch vadd<<<blocks(n - n / 2, 256), 256>>>(da[n / 2..], db[n / 2..], dc[n / 2..], (n - n / 2) as i32);
            copy dc[n / 2..] -> c[n / 2..];
        }
    }
}

fn main() {}
