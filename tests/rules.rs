//! The rules of the checks are listed once, in `memplan_macros_core::check::rules`:
//! the language reference's table is that list's, and every rule has a
//! compile-fail case whose errors are the rule's.

use memplan_macros_core::check::rules::{RULES, table};
use std::collections::HashSet;
use std::path::Path;

/// The reference's table, as `src/language.rs` writes it (its `//! |` lines
/// after the heading row `| refused | because | rule |`).
fn reference_table() -> String {
    let language = include_str!("../src/language.rs");
    let rows: Vec<&str> = language
        .lines()
        .map(|line| line.strip_prefix("//! ").unwrap_or(line))
        .skip_while(|line| *line != "| refused | because | rule |")
        .take_while(|line| line.starts_with('|'))
        .collect();
    rows.iter().map(|row| format!("{row}\n")).collect()
}

#[test]
fn the_reference_table_is_the_rules() {
    let (written, rules) = (reference_table(), table());
    let doc: String = rules.lines().map(|line| format!("//! {line}\n")).collect();
    assert!(
        written == rules,
        "src/language.rs's table of checks is not the rules' (check/rules.rs); it should read:\n\n{doc}"
    );
}

#[test]
fn every_rule_has_a_case_that_fails_with_its_words() {
    let fail = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/fail");
    for rule in RULES {
        let case = fail.join(rule.case);
        assert!(case.exists(), "rule `{}`: no case {}", rule.name, rule.case);
        let stderr = std::fs::read_to_string(case.with_extension("stderr"))
            .unwrap_or_else(|e| panic!("rule `{}`: {}: {e}", rule.name, rule.case));
        assert!(
            rule.says.iter().any(|words| stderr.contains(words)),
            "rule `{}`: none of {:?} is in {}'s errors",
            rule.name,
            rule.says,
            rule.case
        );
    }
}

#[test]
fn rules_have_one_name_each() {
    let mut names = HashSet::new();
    for rule in RULES {
        assert!(
            names.insert(rule.name),
            "two rules are named `{}`",
            rule.name
        );
        assert!(!rule.says.is_empty(), "rule `{}` says nothing", rule.name);
    }
}

/// Every error that building the IR or a check reports, in every
/// compile-fail case, is a rule's: it contains the words of one of
/// `RULES`. (Errors of the syntax are the parser's, and cases it refuses
/// are left out; the lowering's and rustc's are not reported here.)
#[test]
fn every_error_of_the_checks_is_a_rules() {
    let fail = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/fail");
    let mut cases: Vec<_> = std::fs::read_dir(&fail)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    cases.sort();
    let (mut errors_seen, mut strays) = (0, Vec::new());
    for case in cases {
        let source = std::fs::read_to_string(&case).unwrap();
        let file = syn::parse_file(&source).unwrap();
        for item in file.items {
            let syn::Item::Macro(item) = item else {
                continue;
            };
            if item
                .mac
                .path
                .segments
                .last()
                .is_none_or(|s| s.ident != "memplan")
            {
                continue;
            }
            let Ok(input) = syn::parse2::<memplan_macros_core::syntax::Input>(item.mac.tokens)
            else {
                continue;
            };
            for plan in &input.plans {
                let Err(errors) = memplan_macros_core::analyze(plan) else {
                    continue;
                };
                for error in errors {
                    errors_seen += 1;
                    let message = error.to_string();
                    if !RULES
                        .iter()
                        .any(|rule| rule.says.iter().any(|w| message.contains(w)))
                    {
                        let name = case.file_name().unwrap().to_string_lossy();
                        strays.push(format!("{name}: {message}"));
                    }
                }
            }
        }
    }
    assert!(
        strays.is_empty(),
        "these errors are no rule's (add their words to a rule in check/rules.rs, or a rule for them):\n\n{}",
        strays.join("\n\n")
    );
    assert!(
        errors_seen > 100,
        "only {errors_seen} errors found in the cases"
    );
}
