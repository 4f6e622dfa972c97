// Chunk ranges written as products of sizes are compared as such: chunk 0
// and chunk 2 of a `c * w * h` stride cannot overlap, whatever the sizes.
// Halves written as quarters (`2 * (n / 4)`) cover what they cover, and
// stay apart from the other half.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    plan Chunks(c: usize, w: usize, h: usize) {
        host   images: [f32; 3 * c * w * h] pinned;
        device din: [f32; 3 * c * w * h];
        stream first, third;
        on first {
            copy images[0..c * w * h] -> din[0..c * (w * h)];
        }
        on third {
            copy images[2 * c * w * h..3 * c * w * h] -> din[c * w * h * 2..3 * h * w * c];
        }
    }

    plan Quarters(n: usize) {
        host   out: [f32; n] pinned;
        device d: [f32; n];
        stream a, b, c, e;
        on a { fill d[0..n / 4] with 1.0; }
        on b { fill d[n / 4..2 * (n / 4)] with 2.0; }
        on c { fill d[2 * (n / 4)..3 * (n / 4)] with 3.0; }
        on e { fill d[3 * (n / 4)..] with 4.0; }
        sync all;
        copy d -> out;
    }

    // A first half written as two quarters ends at or before the second
    // half starts (`2 * (n / 4) <= n / 2`); for odd `n / 2` one element
    // lies between them, written on a third stream.
    plan HalvesAsQuarters(n: usize) {
        host   out: [f32; n] pinned;
        device d: [f32; n];
        stream a, b, c;
        on a { fill d[0..2 * (n / 4)] with 1.0; }
        on b { fill d[n / 2..] with 2.0; }
        on c { fill d[2 * (n / 4)..n / 2] with 3.0; }
        sync all;
        copy d -> out;
    }
}

fn main() {
    let _ = (Chunks::new, Quarters::new, HalvesAsQuarters::new);
}
