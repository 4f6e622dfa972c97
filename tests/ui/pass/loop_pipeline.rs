// The chunked vector add as a loop: `k` chunks of `m` elements (the last
// one shorter) spread round robin over a set of `s` streams. Iterations
// touch disjoint chunks, so nothing needs to order them.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Pipeline(n: usize, m: usize, k: usize, s: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream lanes[s];
        for i in 0..k {
            on lanes[i % s] {
                copy a[i * m..min(i * m + m, n)] -> da[i * m..min(i * m + m, n)];
                copy b[i * m..min(i * m + m, n)] -> db[i * m..min(i * m + m, n)];
                launch vadd<<<blocks(min(i * m + m, n) - i * m, 256), 256>>>(
                    da[i * m..min(i * m + m, n)], db[i * m..min(i * m + m, n)], dc[i * m..min(i * m + m, n)], (min(i * m + m, n) - i * m) as i32);
                copy dc[i * m..min(i * m + m, n)] -> c[i * m..min(i * m + m, n)];
            }
        }
    }
}

fn main() {
    let _ = Pipeline::new;
}
