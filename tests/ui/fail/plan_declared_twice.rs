use memplan::memplan;

// Two plans of one name in one `memplan!`: one error, at the second.
memplan! {
    plan Twice(n: usize) {
        device d: [f32; n];
        fill d with 0.0;
    }

    plan Twice(n: usize) {
        device e: [f32; n];
        fill e with 1.0;
    }
}

fn main() {}
