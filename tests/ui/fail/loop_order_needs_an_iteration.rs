// The only thing ordering the copy after the loop after the upload before
// it is a record and a wait in the loop's body: with `k = 0` the body never
// runs, and the two copies race.
use memplan::memplan;

memplan! {
    plan P(n: usize, m: usize, k: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   h: [f32; n] pinned, out: [f32; n] pinned;
        device d: [f32; n];
        stream a, b;
        event  e;
        on a { copy h -> d; }
        for c in 0..k {
            let r = c * m..min(c * m + m, n);
            on a { launch process_data<<<blocks(r.len(), 256), 256>>>(d[r], r.len() as i32); record e; }
            on b { wait e; }
        }
        on b { copy d -> out; }
    }
}

fn main() {}
