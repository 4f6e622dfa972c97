// A plan under `#[cfg]` takes its impls with it (and under a `cfg` that
// `cfg_attr` adds, while other attributes it adds stay on the type alone);
// doc comments may annotate
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

    /// Compiled out by a `cfg` that `cfg_attr` adds.
    #[cfg_attr(all(), cfg(any()))]
    plan AlsoGone(n: usize) {
        device d: [f32; n];
        fill d with 0.0;
    }

    /// `repr` is for the type: the plan's impls do not take it.
    #[cfg_attr(all(), repr(transparent))]
    plan Transparent(n: usize) {
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
    let _ = Transparent::new;
}
