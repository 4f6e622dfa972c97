// `x as usize` of something that is not built from the plan's sizes (a
// signed parameter, a constant of another type, a truncating cast) is a
// size of its own: equal only to itself, computed by `new`, and checked
// there like every size (a negative `shift` becomes a huge `usize`, and the
// range it starts is then refused as an error naming the op).
#![deny(warnings)]

use memplan::memplan;

const K: i64 = 3;

memplan! {
    plan Opaque(n: usize, shift: isize) {
        device d: [f32; n];
        fill d with 1.0;
        fill d[(n as u8) as usize..] with 0.0;
        fill d[shift as usize..] with 0.0;
        fill d[..K as usize] with 0.0;
    }
}

fn main() {
    let _ = Opaque::new;
}
