use memplan::memplan;

memplan! {
    plan P(n: usize) {
        unsafe kernel wide(a: &[f32], b: i32, c: i32, d: i32, e: i32, f: i32, g: i32, h: i32, i: i32, j: i32, k: i32, l: i32, m: i32)
            from memplan_kernels::VECTOR_ADD;
    }
}

fn main() {}
