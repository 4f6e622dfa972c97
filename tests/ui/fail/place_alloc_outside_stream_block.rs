use memplan::memplan;

memplan! {
    plan P(n: usize) {
        alloc tmp: [f32; n];
    }
}

fn main() {}
