// A plan under `#[cfg]` takes its impls with it; doc comments may annotate
// declarations and ops; value parameters of any `Copy` type; writes whose
// lengths cannot be compared still cover a later whole write's read.
#![deny(warnings)]

use memplan::memplan;

memplan! {
    /// Compiled out, impls and all.
    #[cfg(any())]
    plan Gone(n: usize) {
        device d: [f32; n];
        fill d with 0.0;
    }

    /// Kept.
    #[cfg(all())]
    plan Kept(n: usize, m: usize, k: usize, name: &'static str, scale: f32) {
        /// Results land here.
        host b: [f32; n] pinned, note: [f32; 1] pageable;
        /// Scratch.
        device d: [f32; n];
        stream s;
        on s {
            /// Lengths `m` and `k` cannot be compared with each other.
            fill d[0..m] with 1.0;
            fill d[0..k] with 2.0;
            fill d with scale;
            copy d -> b;
        }
        sync all;
        host(&mut note) { note[0] = name.len() as f32; }
    }
}

fn main() {
    let _ = Kept::new;
}
