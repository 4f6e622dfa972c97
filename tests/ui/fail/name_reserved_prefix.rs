use memplan::memplan;

memplan! {
    plan P(n: usize) {
        device __memplan_core: [f32; n];
    }
}

fn main() {}
