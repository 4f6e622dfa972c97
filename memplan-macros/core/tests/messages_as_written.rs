//! Errors say ranges as the plan writes them (`c * m..(c + 2) * m`, a named
//! range's name), with a loop's later iteration's variable `c′`, not in the
//! arithmetic's normal form (`m * c..2 * m + m * c`).

use memplan_macros_core::{analyze, syntax::Input};

fn first_lines(plan: &str) -> Vec<String> {
    let input: Input = syn::parse_str(plan).expect("the plan parses");
    let Err(errors) = analyze(&input.plans[0]) else {
        return Vec::new();
    };
    errors
        .into_iter()
        .map(|e| e.to_string().lines().next().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn iterations_race_on_ranges_as_written() {
    let errors = first_lines(
        "plan P(m: usize, k: usize) {
            host   a: [f32; (k + 2) * m] pinned;
            device d: [f32; (k + 2) * m];
            stream lanes[2];
            for c in 0..k {
                on lanes[c % 2] { copy a[c * m..(c + 2) * m] -> d[c * m..(c + 2) * m]; }
            }
        }",
    );
    assert!(!errors.is_empty());
    for error in &errors {
        assert!(error.contains("at c * m..(c + 2) * m"), "{error}");
        assert!(error.contains("at c′ * m..(c′ + 2) * m"), "{error}");
        assert!(!error.contains("m * c"), "{error}");
    }
}

#[test]
fn a_named_range_is_said_by_its_name() {
    let errors = first_lines(
        "plan P(n: usize, m: usize, k: usize) {
            host   a: [f32; n] pinned;
            device d: [f32; n];
            stream s;
            for c in 0..k {
                let chunk = c * m..(c + 1) * m;
                on s { copy a[chunk] -> d[chunk]; }
            }
        }",
    );
    assert!(!errors.is_empty());
    for error in &errors {
        assert!(
            error.starts_with("in the loop, the range chunk may reach past"),
            "{error}"
        );
    }
}
