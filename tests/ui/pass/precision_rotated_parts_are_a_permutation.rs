// Each of `g` iterations writes part `(i + 1) % g` of a set of `g`: over
// `0..g` that index takes every value once, so no two iterations share a
// part, and their streams need no order.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    pub plan Rotate(m: usize, g: usize) {
        host   input: [f32; g * m] pinned;
        device part[g]: [f32; m];
        stream lanes[g];
        for i in 0..g {
            on lanes[i % g] {
                copy input[i * m..i * m + m] -> part[(i + 1) % g];
            }
        }
    }
}

fn main() {
    let _ = Rotate::new;
}
