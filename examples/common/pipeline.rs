// The 64M-float vector add three ways, shared by the `pipeline` example
// and `benches/pipeline.rs`: on one stream, and as a loop over chunks in
// the two schedules the `memplan::language` docs compare.

use memplan::memplan;

memplan! {
    /// c = a + b on one stream: upload everything, add, download.
    pub plan OneStream(n: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream work;
        on work {
            copy a -> da;
            copy b -> db;
            launch vadd<<<blocks(n, 256), 256>>>(da, db, dc, n as i32);
            copy dc -> c;
        }
    }

    /// c = a + b in `k` chunks of `m` (the last one shorter), each chunk's
    /// upload, add and download on stream `c % s` of a set: the classic
    /// round-robin schedule.
    pub plan RoundRobin(n: usize, m: usize, k: usize, s: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream lanes[s];
        for i in 0..k {
            let r = i * m..min(i * m + m, n);
            on lanes[i % s] {
                copy a[r] -> da[r];
                copy b[r] -> db[r];
                launch vadd<<<blocks(r.len(), 256), 256>>>(da[r], db[r], dc[r], r.len() as i32);
                copy dc[r] -> c[r];
            }
        }
    }

    /// c = a + b in `k` chunks of `m`, with a stream for each engine:
    /// uploads never wait behind downloads, so the host-to-device engine
    /// is never idle, and the downloads follow on their own.
    pub plan Pipelined(n: usize, m: usize, k: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream up, add, down;
        event  loaded, added;
        for i in 0..k {
            let r = i * m..min(i * m + m, n);
            on up   { copy a[r] -> da[r]; copy b[r] -> db[r]; record loaded; }
            on add  { wait loaded; launch vadd<<<blocks(r.len(), 256), 256>>>(da[r], db[r], dc[r], r.len() as i32); record added; }
            on down { wait added; copy dc[r] -> c[r]; }
        }
    }
}
