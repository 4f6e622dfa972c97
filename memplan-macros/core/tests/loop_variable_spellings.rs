//! A loop's variable is found in every term that reads it, however it is
//! spelled: as a raw identifier (`r#c` is `c`) or with characters beyond
//! ASCII letters (`c‿i`). A term of the variable taken for one fixed
//! across iterations would let a plan through that the plain spelling
//! does not: here a gap after a loop's chunks, and two iterations that
//! share a ring slot.

use memplan_macros_core::{analyze, syntax::Input};

const SPELLINGS: [&str; 4] = ["c", "r#c", "c‿i", "cé"];

/// Asserts that `plan`, written with each spelling of its loop variable,
/// has an error that says `says`.
fn refused_in_every_spelling(plan: impl Fn(&str) -> String, says: &str) {
    for v in SPELLINGS {
        let text = plan(v);
        let input: Input = syn::parse_str(&text).expect("the plan parses");
        let errors: Vec<String> = match analyze(&input.plans[0]) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
        };
        assert!(errors.iter().any(|e| e.contains(says)), "{v}: {errors:?}");
    }
}

#[test]
fn chunks_shifted_by_a_min_of_the_variable_leave_a_gap() {
    // Iteration 0 writes d[0..m], iteration 1 d[2m + 1..], so element m is
    // never written, and the read after the loop must be refused.
    refused_in_every_spelling(
        |v| {
            format!(
                "plan P(k: usize, m: usize) {{ host h: [f32; (k + 2) * m + 1] pinned; \
                 device d: [f32; (k + 2) * m + 1]; stream s; \
                 for {v} in 0..k + 2 {{ let r = {v} * m + min({v}, 1)..({v} + 1) * m + min({v}, 1); \
                 on s {{ copy h[r] -> d[r]; }} }} \
                 on s {{ copy d[m..2 * m] -> h[m..2 * m]; }} }}"
            )
        },
        "cannot find earlier operations that write",
    );
}

#[test]
fn a_ring_index_through_a_min_of_the_variable_is_shared() {
    // Iterations 0 and 1 both use ring[0], on different streams.
    refused_in_every_spelling(
        |v| {
            format!(
                "plan Q(k: usize, n: usize) {{ host h: [f32; n] pinned; device ring[k]: [f32; n]; \
                 stream lanes[k]; for {v} in 0..k {{ on lanes[{v}] {{ copy h -> ring[{v} - min({v}, 1)]; }} }} }}"
            )
        },
        "with nothing ordering the two",
    );
}
