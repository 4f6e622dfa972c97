// A set indexed two ways in a loop is an error of the loop's first
// reading only (the second reads the loop's later iteration): the loop's
// other mistakes are still each one error, and its ops are still its own.
use memplan::memplan;

memplan! {
    plan Ring(n: usize, m: usize, k: usize, r: usize) {
        host   a: [f32; n] pinned;
        device ring[r]: [f32; m];
        stream s;
        for c in 0..k {
            on s {
                alloc t: [f32; m];
                copy a[c * m..(c + 1) * m] -> ring[c % r];
                copy ring[(c + 1) % r] -> t;
                free t;
            }
        }
    }
}

fn main() {}
