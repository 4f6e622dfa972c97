// Declarations checked against the C++ of each linkage: an `extern "C"`
// kernel, a C++ one (found by its C++ name, loaded by its mangled symbol),
// and a template's explicit instances, named with `as`. Every parameter
// width and signedness a declaration can state is matched.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Linkages(n: usize) {
        kernel c_linkage(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SIGNATURES;
        kernel cpp_linkage(input: &[f64; n], output: &out [f64; n], n: u32) from memplan_kernels::SIGNATURES;
        kernel scale_f32(input: &[f32; n], output: &out [f32; n], factor: f32, n: i32)
            from memplan_kernels::SIGNATURES as "scaled<float>";
        kernel scale_i32(input: &[i32; n], output: &out [i32; n], factor: i32, n: i32)
            from memplan_kernels::SIGNATURES as "scaled<int>";
        kernel widths(out: &out [u64; 1], a: i64, b: u32, c: usize, d: i16) from memplan_kernels::SIGNATURES;

        device x: [f32; n], y: [f32; n], u: [f64; n], v: [f64; n], i: [i32; n], j: [i32; n], w: [u64; 1];
        fill x with 1.0;
        fill u with 1.0;
        fill i with 1;
        fill j with 0;
        fill w with 0;
        launch c_linkage<<<blocks(n, 256), 256>>>(x, y, n as i32);
        launch cpp_linkage<<<blocks(n, 256), 256>>>(u, v, n as u32);
        launch scale_f32<<<blocks(n, 256), 256>>>(y, x, 0.5, n as i32);
        launch scale_i32<<<blocks(n, 256), 256>>>(i, j, 3, n as i32);
        launch widths<<<1, 1>>>(w, -1, 2, n, 4);
    }
}

fn main() {
    let _ = Linkages::new;
}
