//! Test data: distinct, non-zero, different on every call (a fixed-seed
//! generator keeps failures reproducible), and checks that name the first
//! element that differs.

use libtest_mimic::Failed;
use std::sync::atomic::{AtomicU64, Ordering};

static SEED: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);

/// `n` floats in [-1000, 1000), none of them zero.
pub fn floats(n: usize) -> Vec<f32> {
    let mut state = SEED.fetch_add(0x1234_5678_9abc_def1, Ordering::Relaxed);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
            let value = unit * 2000.0 - 1000.0;
            if value == 0.0 { 0.5 } else { value }
        })
        .collect()
}

/// Fails with the first index where `got` and `expected` differ.
pub fn same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    expected: &[T],
) -> Result<(), Failed> {
    if got.len() != expected.len() {
        return Err(format!(
            "{what}: {} elements, expected {}",
            got.len(),
            expected.len()
        )
        .into());
    }
    match got.iter().zip(expected).position(|(g, e)| g != e) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i} is {:?}, expected {:?}",
            got[i], expected[i]
        )
        .into()),
    }
}
