// An extent may name a value that is not a size of the plan (a call, a
// value parameter): `new` computes the extent from what the kernel
// receives and checks it, and the checks track the whole argument.
#![deny(warnings)]

use memplan::memplan;

fn count() -> i32 {
    4
}

memplan! {
    plan FromCall(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        device d: [f32; n];
        fill d with 0.0;
        launch process_data<<<1, 256>>>(d, count());
    }

    plan FromParameter(len: usize, shown: i32) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32)
            from memplan_kernels::VECTOR_ADD;
        device a: [f32; len], b: [f32; len], c: [f32; len];
        fill a with 1.0;
        fill b with 2.0;
        launch vadd<<<blocks(len, 256), 256>>>(a, b, c, shown * 2);
    }
}

fn main() {
    let _ = (FromCall::new, FromParameter::new);
}
