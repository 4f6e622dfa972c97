// `cpp_linkage` takes its count as a `u32` (`unsigned int n` in the .cu).
// A count computed at each iteration is written in the parameter's own
// type; cast to another one it is refused, as rustc refuses such a value
// outside a loop, instead of giving the kernel bytes of another width.
use memplan::memplan;

memplan! {
    plan P(m: usize, k: usize) {
        kernel cpp_linkage(input: &[f64; n], output: &out [f64; n], n: u32) from memplan_kernels::SIGNATURES;
        device a: [f64; k * m], b: [f64; k * m];
        stream s;
        on s { fill a with 1.0; }
        for c in 0..k {
            let r = c * m..(c + 1) * m;
            on s { launch cpp_linkage<<<blocks(m, 256), 256>>>(a[r], b[r], r.len() as i64); }
        }
    }
}

fn main() {}
