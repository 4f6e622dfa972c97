// Hole 2: fill values, ranges and lengths are evaluated in safe code, so
// an expression that needs `unsafe` gets rustc's own error at the user's
// tokens, inside stream blocks as outside them.
#![forbid(unsafe_code)]

use memplan::memplan;

static mut LIMIT: usize = 4;

memplan! {
    plan Smuggle(n: usize) {
        device d: [f32; n], e: [u32; n];
        stream s;
        on s {
            fill d with *(0x10 as *const f32);
            fill e with core::mem::zeroed::<u32>();
            fill d[..LIMIT] with 0.0;
            alloc t: [f32; LIMIT];
            fill t with 0.0;
            free t;
        }
    }
}

fn main() {}
