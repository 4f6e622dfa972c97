//! The fix a race report suggests, for events that exist but are misplaced.

use memplan_macros_core::{analyze, syntax::Input};

/// The help lines of the errors `plan` gets.
fn helps(plan: &str) -> Vec<String> {
    let input: Input = syn::parse_str(plan).expect("the plan parses");
    let Err(errors) = analyze(&input.plans[0]) else {
        return Vec::new();
    };
    errors
        .into_iter()
        .filter_map(|e| {
            let message = e.to_string();
            message
                .find("help: ")
                .map(|at| message[at + 6..].to_owned())
        })
        .collect()
}

const DECLARATIONS: &str = "
    device d: [f32; n];
    stream s1, s2;
    event ready;
    fill d with 0.0;
";

fn plan(body: &str) -> String {
    format!("plan P(n: usize) {{ {DECLARATIONS} {body} }}")
}

#[test]
fn a_record_before_the_write_is_moved_after_it() {
    let helps = helps(&plan(
        "on s1 { record ready; fill d with 1.0; }
         on s2 { wait ready; fill d with 2.0; }",
    ));
    assert!(!helps.is_empty());
    for help in helps {
        assert!(
            help.starts_with("move `record ready;` (line ")
                && help.contains("after `fill d with 1.0` on stream `s1`"),
            "{help}"
        );
    }
}

#[test]
fn a_record_on_the_wrong_stream_is_recorded_on_the_writer() {
    let helps = helps(&plan(
        "on s1 { fill d with 1.0; }
         on s2 { record ready; }
         on s2 { wait ready; fill d with 2.0; }",
    ));
    assert!(!helps.is_empty());
    for help in helps {
        assert!(
            help.contains("record it on stream `s1` after `fill d with 1.0`"),
            "{help}"
        );
    }
}

/// A wait issued before the write cannot wait for it wherever its record
/// goes: the fix is a wait after the write, not a moved record.
#[test]
fn a_wait_before_the_write_is_not_fixed_by_moving_the_record() {
    let helps = helps(&plan(
        "on s1 { record ready; }
         on s2 { wait ready; }
         on s1 { fill d with 1.0; }
         on s2 { fill d with 2.0; }",
    ));
    assert!(!helps.is_empty());
    for help in helps {
        assert!(!help.contains("move `record"), "{help}");
        assert!(!help.contains("record it on"), "{help}");
    }
}

#[test]
fn an_ordered_plan_gets_no_help_at_all() {
    let helps = helps(&plan(
        "on s1 { fill d with 1.0; record ready; }
         on s2 { wait ready; fill d with 2.0; }",
    ));
    assert_eq!(helps, Vec::<String>::new());
}
