// Declarations that cannot be so: `registered` on a value, `run` on a
// slice (each run is given it already), a bound on a value, a set of host
// buffers. One error each, and the plan's uses of them add none (no rustc
// error from the plan's interface either).
use memplan::memplan;

memplan! {
    plan Forms(n: usize, m: usize, k: usize, r: usize, scale: f32 registered, run xs: &mut [f32; n], run a: f32 <= 2.0) {
        host   staging[r]: [f32; m] pinned;
        device d: [f32; n];
        stream s;
        on s { copy xs -> d; }
        for c in 0..k {
            on s { copy d[c * m..(c + 1) * m] -> staging[c % r]; }
        }
        sync s;
    }
}

fn main() {
    let _ = Forms::new;
}
