use memplan::memplan;

memplan! {
    plan P(n: usize) {
        kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;
        device da: [f32; n], dc: [f32; n];
        fill da with 1.0;
        launch vadd<<<blocks(n, 256), 256>>>(da, dc, n as i32);
    }
}

fn main() {}
