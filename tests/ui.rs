//! trybuild: plans that must compile (and run without a GPU), and plans
//! that must not, each with the error rustc shows for it (`.stderr` next to
//! the case). Refresh the `.stderr` files with `TRYBUILD=overwrite cargo test
//! --test ui` after a deliberate change to a message, and review the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
