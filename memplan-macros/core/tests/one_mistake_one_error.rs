//! One forgotten `wait` is one error, whose help is the `wait` that was
//! forgotten: each `wait` of a three-stream pipeline is left out in turn,
//! and the plan must give exactly one error, offering a `wait`, and the
//! plan with that `wait` put back where the help says must pass every
//! check. A ring whose slots no event hands from one iteration to the
//! next is one error too, whose help declares the events, and the plan
//! with the help applied passes.

use memplan_macros_core::{analyze, syntax::Input};

#[path = "common/help.rs"]
mod help;
use help::applied;

const PIPELINE: &str = "
plan Engines(n: usize, m: usize, k: usize, r: usize) {
    kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
    host   input: [f32; n] pinned, output: [f32; n] pinned;
    device ring[r]: [f32; m];
    stream up, work, down;
    event  loaded[r], done[r], freed[r];
    for c in 0..k {
        let chunk = c * m..min(c * m + m, n);
        let used = 0..chunk.len();
        on up {
            wait freed[c % r];
            copy input[chunk] -> ring[c % r][used];
            record loaded[c % r];
        }
        on work {
            wait loaded[c % r];
            launch process_data<<<blocks(chunk.len(), 256), 256>>>(ring[c % r][used], chunk.len() as i32);
            record done[c % r];
        }
        on down {
            wait done[c % r];
            copy ring[c % r][used] -> output[chunk];
            record freed[c % r];
        }
    }
}";

fn errors(plan: &str) -> Vec<String> {
    let input: Input = syn::parse_str(plan).expect("the plan parses");
    match analyze(&input.plans[0]) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// The one error `plan` gives, and its help's first line.
fn one_error(plan: &str) -> (String, String) {
    let found = errors(plan);
    assert_eq!(found.len(), 1, "{plan}\n{found:#?}");
    let help = &found[0][found[0].find("help: ").expect("a help") + 6..];
    (found[0].clone(), help.lines().next().unwrap().to_owned())
}

const RING: &str = "
plan OutOfCore(n: usize, m: usize, k: usize, q: usize) {
    kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
    host   input: [f32; n] pinned, output: [f32; n] pinned;
    device ring[q]: [f32; m];
    stream up, lanes[q];
    event  loaded[q], freed[q];
    for c in 0..k {
        let chunk = c * m..min(c * m + m, n);
        let used = 0..chunk.len();
        on up {
            wait freed[c % q];
            copy input[chunk] -> ring[c % q][used];
            record loaded[c % q];
        }
        on lanes[c % q] {
            wait loaded[c % q];
            launch process_data<<<blocks(chunk.len(), 256), 256>>>(ring[c % q][used], chunk.len() as i32);
            copy ring[c % q][used] -> output[chunk];
            record freed[c % q];
        }
    }
}";

#[test]
fn a_ring_without_its_freed_events_is_handed_on_by_new_ones() {
    assert!(errors(RING).is_empty(), "{:?}", errors(RING));
    // The `wait` forgotten: put back.
    let forgotten = RING.replace("wait freed[c % q];", "");
    let (_, help) = one_error(&forgotten);
    assert!(
        help.starts_with("add `wait freed[c % q];` on stream `up`"),
        "{help}"
    );
    assert!(errors(&applied(&forgotten, &help)).is_empty());
    // No `freed` at all: a new set of events, recorded after the slot's
    // last use and waited for before its first.
    let without = RING
        .replace("wait freed[c % q];", "")
        .replace("record freed[c % q];", "")
        .replace(", freed[q]", "");
    let (_, help) = one_error(&without);
    assert!(
        help.starts_with("hand `ring[c % q]` from each iteration"),
        "{help}"
    );
    let fixed = applied(&without, &help);
    assert!(errors(&fixed).is_empty(), "{fixed}\n{:#?}", errors(&fixed));
}

#[test]
fn each_forgotten_wait_is_one_error_and_its_help_puts_it_back() {
    assert!(errors(PIPELINE).is_empty(), "{:?}", errors(PIPELINE));
    for wait in [
        "wait freed[c % r];",
        "wait loaded[c % r];",
        "wait done[c % r];",
    ] {
        let forgotten = PIPELINE.replace(wait, "");
        let (_, help) = one_error(&forgotten);
        assert!(
            help.starts_with(&format!("add `{wait}` on stream")),
            "without `{wait}`: {help}"
        );
        let fixed = applied(&forgotten, &help);
        assert!(errors(&fixed).is_empty(), "{fixed}\n{:#?}", errors(&fixed));
    }
}
