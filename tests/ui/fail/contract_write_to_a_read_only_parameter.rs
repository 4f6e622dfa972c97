// saxpy.cu says `MEMPLAN_READS(n) const float *x`: a declaration that lets
// the kernel write `x` says something its source does not.
use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel saxpy(n: i32, a: f32, x: &mut [f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        device x: [f32; n], y: [f32; n];
        fill x with 1.0;
        fill y with 2.0;
        launch saxpy<<<blocks(n, 256), 256>>>(n as i32, 2.0, x, y);
    }
}

fn main() {}
