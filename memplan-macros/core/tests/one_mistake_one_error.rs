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

/// `plan` with the help of every error applied, each at its error's line.
fn every_help_applied(plan: &str) -> String {
    let input: Input = syn::parse_str(plan).expect("the plan parses");
    let Err(errors) = analyze(&input.plans[0]) else {
        return plan.to_owned();
    };
    let mut fixed = plan.to_owned();
    for error in errors {
        let message = error.to_string();
        let help = &message[message.find("help: ").expect("a help") + 6..];
        fixed = help::apply(&fixed, help, Some(error.span().start().line))
            .unwrap_or_else(|why| panic!("{why}\n{help}\n{fixed}"));
    }
    fixed
}

#[test]
fn two_new_events_in_one_plan_have_two_names() {
    // Two races no event of the plan orders, one new event each: applied
    // together, the helps must not declare one name twice.
    let plan = "
plan Two(n: usize) {
    host a: [f32; n] pinned, b: [f32; n] pinned;
    device d: [f32; n], e: [f32; n];
    stream s1, s2, s3, s4;
    on s1 { copy a -> d; }
    on s2 { copy d -> b; }
    on s3 { copy a -> e; }
    on s4 { copy e -> b; }
}";
    let found = errors(plan);
    assert!(found.len() >= 2, "{found:#?}");
    let fixed = every_help_applied(plan);
    assert!(errors(&fixed).is_empty(), "{fixed}\n{:#?}", errors(&fixed));
}

#[test]
fn a_new_event_is_not_named_as_the_plans_gpus() {
    let plan = "
plan Gpus(n: usize) {
    gpus done[2];
    host a: [f32; n] pinned;
    device d: [f32; n] on done[0], e: [f32; n] on done[1];
    stream s1 on done[0], s2 on done[1];
    on s1 { copy a -> d; }
    on s2 { copy d -> e; }
}";
    let (_, help) = one_error(plan);
    assert!(help.starts_with("declare `event done_2;`"), "{help}");
    let fixed = applied(plan, &help);
    assert!(errors(&fixed).is_empty(), "{fixed}\n{:#?}", errors(&fixed));
}

#[test]
fn an_op_written_twice_on_its_stream_is_named_by_its_line() {
    // `launch process_data` twice on `t`; the second races with `s`'s
    // copy. The help's `wait` must go before the second, which only its
    // line tells apart.
    let plan = "
plan Twice(n: usize) {
    kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
    host a: [f32; n] pinned;
    device d: [f32; n], e: [f32; n];
    stream s, t;
    event done;
    on t { fill e with 0.0; launch process_data<<<blocks(n, 256), 256>>>(e, n as i32); }
    on s { copy a -> d; record done; }
    on t { launch process_data<<<blocks(n, 256), 256>>>(d, n as i32); }
}";
    let (_, help) = one_error(plan);
    assert!(
        help.starts_with("add `wait done;` on stream `t` before `launch process_data` (line 10)"),
        "{help}"
    );
    let fixed = applied(plan, &help);
    assert!(errors(&fixed).is_empty(), "{fixed}\n{:#?}", errors(&fixed));
}
