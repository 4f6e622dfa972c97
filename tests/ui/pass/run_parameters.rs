// Sizes and values given to each run: a batch of `len` elements of at most
// `cap` (the last batch shorter), scaled by a new `a` each time, and a
// loop whose chunk count the run sets.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Saxpy(cap: usize, run len: usize, run a: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device dx: [f32; cap], dy: [f32; cap];
        stream s;
        on s {
            copy x[..len] -> dx[..len];
            copy y[..len] -> dy[..len];
            launch saxpy<<<blocks(len, 256), 256>>>(len as i32, 2.0 * a, dx[..len], dy[..len]);
            copy dy[..len] -> y[..len];
        }
    }

    pub plan Chunks(cap: usize, m: usize, run k: usize, run a: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; cap] pinned, y: [f32; cap] pinned;
        device dx: [f32; cap], dy: [f32; cap];
        stream lanes[2];
        for c in 0..k {
            on lanes[c % 2] {
                copy x[c * m..min(c * m + m, cap)] -> dx[c * m..min(c * m + m, cap)];
                copy y[c * m..min(c * m + m, cap)] -> dy[c * m..min(c * m + m, cap)];
                launch saxpy<<<blocks(min(c * m + m, cap) - c * m, 256), 256>>>(
                    (min(c * m + m, cap) - c * m) as i32, a,
                    dx[c * m..min(c * m + m, cap)], dy[c * m..min(c * m + m, cap)]);
                copy dy[c * m..min(c * m + m, cap)] -> y[c * m..min(c * m + m, cap)];
            }
        }
    }
}

fn main() {
    let _ = Saxpy::new;
    let _ = Saxpy::run;
    let _ = Saxpy::submit;
    let _ = Chunks::run;
}
