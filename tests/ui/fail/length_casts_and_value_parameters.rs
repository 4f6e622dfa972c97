use memplan::memplan;

// Lengths and ranges are `usize` arithmetic memplan can compare: no
// truncating or sign-changing casts, no parameters of other types.
memplan! {
    plan P(n: usize, shift: isize) {
        device d: [f32; n];
        fill d[(n as u8) as usize..] with 0.0;
        fill d[shift as usize..] with 0.0;
    }
}

fn main() {}
