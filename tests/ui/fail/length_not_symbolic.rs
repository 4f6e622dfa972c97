use memplan::memplan;

// Sizes are `usize` arithmetic (`+ - * / %`), calls and casts to `usize`:
// a shift or a float is not. (Calls are sizes of their own: see the pass
// case `opaque_calls_are_sizes`.)
memplan! {
    plan P(n: usize) {
        device d: [f32; n << 2], e: [f32; 1.5];
    }
}

fn main() {}
