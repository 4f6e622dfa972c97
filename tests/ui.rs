//! trybuild: plans that must compile (and run without a GPU), and plans
//! that must not, each with the error rustc shows for it (`.stderr` next to
//! the case). Refresh the `.stderr` files with `TRYBUILD=overwrite cargo test
//! --test ui` after a deliberate change to a message, and review the diff.
//!
//! The fail cases with their machine-applicable helps applied must compile
//! too (`ui/helps.rs`).

#[path = "ui/helps.rs"]
mod helps;

#[test]
fn ui() {
    let applied = helps::applied_cases(
        &std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("helps-applied"),
    );
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    for case in applied {
        cases.pass(case);
    }
}
