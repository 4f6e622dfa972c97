// What a loop writes counts after it where the checks can name the whole:
// chunks `c * m..(c + 1) * m` together cover `0..k * m`, whether the loop
// runs `k` times or none (then the buffer is empty too), on one stream or
// on a set of streams the host waits for; and a loop that always runs
// (`0..passes + 1`) writes what each of its iterations does.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Chunked(k: usize, m: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   h: [f32; k * m] pinned, out: [f32; k * m] pinned;
        device d: [f32; k * m];
        stream s;
        for c in 0..k {
            on s { copy h[c * m..c * m + m] -> d[m * c..m * (c + 1)]; }
        }
        on s {
            launch process_data<<<blocks(k * m, 256), 256>>>(d, (k * m) as i32);
            copy d -> out;
        }
    }

    plan Spread(k: usize, m: usize, s: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   h: [f32; k * m] pinned, out: [f32; k * m] pinned;
        device d: [f32; k * m];
        stream lanes[s], t;
        for c in 0..k {
            on lanes[c % s] { copy h[c * m..(c + 1) * m] -> d[c * m..(c + 1) * m]; }
        }
        sync lanes;
        on t {
            launch process_data<<<blocks(k * m, 256), 256>>>(d, (k * m) as i32);
            copy d -> out;
        }
    }

    plan Passes(n: usize, passes: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   h: [f32; n] pinned, out: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        for p in 0..passes + 1 {
            on s {
                copy h -> d;
                launch process_data<<<blocks(n, 256), 256>>>(d, n as i32);
            }
        }
        on s { copy d -> out; }
    }
}

fn main() {
    let _ = (Chunked::new, Spread::new, Passes::new);
}
