// `new` evaluates the plan's Rust expressions once: a fill value, a launch
// value that is not a count, a launch dimension outside the size
// arithmetic. Such an expression may read neither a loop's variable nor a
// `run` parameter; sizes written in the arithmetic may (the runtime
// computes them at each iteration and each run).
use memplan::memplan;

fn rounded(n: usize) -> u32 {
    n.div_ceil(256) as u32
}

memplan! {
    plan FillEachChunk(m: usize, k: usize) {
        device d: [f32; k * m];
        stream s;
        for c in 0..k {
            on s { fill d[c * m..(c + 1) * m] with c as f32; }
        }
    }
}

memplan! {
    plan GridOfEachRun(cap: usize, run len: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; cap];
        stream s;
        on s {
            fill d[..min(len, cap)] with 0.0;
            launch process_data<<<rounded(len), 256>>>(d[..min(len, cap)], min(len, cap) as i32);
        }
    }
}

fn main() {}
