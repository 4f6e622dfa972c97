//! A loop's variable is found in every term that reads it, however it is
//! spelled: as a raw identifier (`r#c` is `c`) or with characters beyond
//! ASCII letters (`c‿i`). A term of the variable taken for one fixed
//! across iterations would let a plan through that the plain spelling
//! does not: here a gap after a loop's chunks, and two iterations that
//! share a ring slot.

use memplan_macros_core::{analyze, syntax::Input};

const SPELLINGS: [&str; 4] = ["c", "r#c", "c‿i", "cé"];

fn errors(text: &str) -> Vec<String> {
    let input: Input = syn::parse_str(text).expect("the plan parses");
    match analyze(&input.plans[0]) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn chunks_shifted_by_a_min_of_the_variable_leave_a_gap() {
    for v in SPELLINGS {
        // Iteration 0 writes d[0..m], iteration 1 d[2m + 1..], so element
        // m is never written, and the read after the loop must be refused.
        let text = format!(
            "plan P(k: usize, m: usize) {{ host h: [f32; (k + 2) * m + 1] pinned; \
             device d: [f32; (k + 2) * m + 1]; stream s; \
             for {v} in 0..k + 2 {{ let r = {v} * m + min({v}, 1)..({v} + 1) * m + min({v}, 1); \
             on s {{ copy h[r] -> d[r]; }} }} \
             on s {{ copy d[m..2 * m] -> h[m..2 * m]; }} }}"
        );
        let errors = errors(&text);
        assert!(
            errors
                .iter()
                .any(|e| e.contains("cannot find earlier operations that write")),
            "{v}: {errors:?}"
        );
    }
}

#[test]
fn a_ring_index_through_a_min_of_the_variable_is_shared() {
    for v in SPELLINGS {
        // Iterations 0 and 1 both use ring[0], on different streams.
        let text = format!(
            "plan Q(k: usize, n: usize) {{ host h: [f32; n] pinned; device ring[k]: [f32; n]; \
             stream lanes[k]; for {v} in 0..k {{ on lanes[{v}] {{ copy h -> ring[{v} - min({v}, 1)]; }} }} }}"
        );
        let errors = errors(&text);
        assert!(
            errors
                .iter()
                .any(|e| e.contains("with nothing ordering the two")),
            "{v}: {errors:?}"
        );
    }
}
