use memplan::memplan;

// Lengths and ranges are `usize` sizes: a cast to another type, or a
// parameter of another type, is not one. (`x as usize` of anything is a
// size, opaque where memplan cannot see into it: see the pass case
// `opaque_casts_are_sizes`.)
memplan! {
    plan P(n: usize, shift: isize) {
        device d: [f32; n];
        fill d[n as u8..] with 0.0;
        fill d[shift..] with 0.0;
    }
}

fn main() {}
