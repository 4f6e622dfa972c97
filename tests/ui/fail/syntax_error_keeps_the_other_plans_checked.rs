use memplan::memplan;

// A plan that does not parse is reported, and the plans after it are still
// read and checked: here, a race in the second.
memplan! {
    plan Broken(n: usize) {
        device d: [f32; n];
        copy d => d;
    }

    plan Racy(n: usize) {
        host   a: [f32; n] pinned, b: [f32; n] pinned;
        device d: [f32; n];
        stream s1, s2;
        on s1 { copy a -> d; }
        on s2 { copy d -> b; }
    }
}

fn main() {}
