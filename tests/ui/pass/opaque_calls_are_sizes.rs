// A call, a method call or a field is a size of its own: computed by `new`,
// equal only to itself, and checked like every size.
#![deny(warnings)]

use memplan::memplan;

struct Shape {
    rows: usize,
}

const SHAPE: Shape = Shape { rows: 8 };

fn padded(n: usize) -> usize {
    n.next_multiple_of(64)
}

memplan! {
    plan Opaque(n: usize) {
        device d: [f32; padded(n)], e: [f32; n.pow(2)], f: [f32; SHAPE.rows];
        stream s;
        on s {
            fill d with 0.0;
            fill e[..padded(n) - padded(n)] with 0.0;
            fill f with 1.0;
        }
    }
}

fn main() {
    let _ = Opaque::new;
}
