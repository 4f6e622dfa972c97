//! The race checker against a brute-force oracle, on random plans.
//!
//! Each case is a random plan (2 to 8 streams, events, syncs, fills and
//! copies on random ranges of a few buffers), written as source text and run
//! through the whole front end. The oracle builds the happens-before graph
//! edge by edge (program order on each stream, issue order from the host,
//! record -> wait, stream -> sync), takes its transitive closure, and looks
//! for two accesses to overlapping ranges of one buffer from different
//! lanes, at least one a write, with no path between them. The checker must
//! reject the plan exactly when the oracle finds such a pair.

use memplan_macros_core::{analyze, syntax::Input};
use proptest::prelude::*;

const BUFFERS: usize = 3;
const LEN: usize = 64;

/// An op of a generated plan, as the oracle sees it.
#[derive(Clone, Debug)]
enum Op {
    Fill {
        buffer: usize,
        range: (usize, usize),
    },
    Copy {
        from: usize,
        from_range: (usize, usize),
        to: usize,
        to_start: usize,
    },
    Record {
        event: usize,
    },
    Wait {
        event: usize,
    },
    Sync {
        stream: Option<usize>,
    },
}

/// An op and where it runs: `None` for the host (top level).
#[derive(Clone, Debug)]
struct Step {
    stream: Option<usize>,
    op: Op,
}

#[derive(Clone, Debug)]
struct GeneratedPlan {
    streams: usize,
    events: usize,
    steps: Vec<Step>,
}

fn range() -> impl Strategy<Value = (usize, usize)> {
    (0..LEN, 1..=LEN / 2)
        .prop_map(|(start, len)| (start.min(LEN - len), start.min(LEN - len) + len))
}

fn raw_step(streams: usize, events: usize) -> impl Strategy<Value = (Option<usize>, Op)> {
    let on_stream = (0..streams).prop_map(Some);
    prop_oneof![
        4 => (on_stream.clone(), 0..BUFFERS, range()).prop_map(|(s, buffer, range)| (s, Op::Fill { buffer, range })),
        4 => (on_stream.clone(), 0..BUFFERS, range(), 0..BUFFERS, 0..LEN).prop_map(|(s, from, from_range, to, to_start)| {
            (s, Op::Copy { from, from_range, to, to_start })
        }),
        3 => (on_stream.clone(), 0..events).prop_map(|(s, event)| (s, Op::Record { event })),
        4 => (on_stream, 0..events).prop_map(|(s, event)| (s, Op::Wait { event })),
        2 => prop::option::of(0..streams).prop_map(|stream| (None, Op::Sync { stream })),
        1 => (0..BUFFERS, range()).prop_map(|(buffer, range)| (None, Op::Fill { buffer, range })),
    ]
}

fn plan() -> impl Strategy<Value = GeneratedPlan> {
    (2..=8usize, 1..=4usize).prop_flat_map(|(streams, events)| {
        prop::collection::vec(raw_step(streams, events), 1..40).prop_map(move |raw| GeneratedPlan {
            streams,
            events,
            steps: make_valid(raw),
        })
    })
}

/// Shapes the random steps into a plan whose only possible errors are
/// races: every buffer is filled first, copies fit and do not overlap
/// themselves, and every `wait` follows a `record` of its event.
fn make_valid(raw: Vec<(Option<usize>, Op)>) -> Vec<Step> {
    let mut steps: Vec<Step> = (0..BUFFERS)
        .map(|buffer| Step {
            stream: None,
            op: Op::Fill {
                buffer,
                range: (0, LEN),
            },
        })
        .collect();
    let mut recorded = Vec::new();
    for (stream, op) in raw {
        let op = match op {
            Op::Copy {
                from,
                from_range,
                to,
                to_start,
            } => {
                let len = from_range.1 - from_range.0;
                let to_start = to_start.min(LEN - len);
                let overlaps_itself =
                    from == to && to_start < from_range.1 && from_range.0 < to_start + len;
                if overlaps_itself {
                    continue;
                }
                Op::Copy {
                    from,
                    from_range,
                    to,
                    to_start,
                }
            }
            Op::Record { event } => {
                recorded.push(event);
                Op::Record { event }
            }
            Op::Wait { event } if !recorded.contains(&event) => continue,
            op => op,
        };
        steps.push(Step { stream, op });
    }
    steps
}

fn source(plan: &GeneratedPlan) -> String {
    let mut text = String::from("plan P() {\n");
    for buffer in 0..BUFFERS {
        text += &format!("device d{buffer}: [f32; {LEN}];\n");
    }
    let streams: Vec<String> = (0..plan.streams).map(|s| format!("s{s}")).collect();
    text += &format!("stream {};\n", streams.join(", "));
    let events: Vec<String> = (0..plan.events).map(|e| format!("e{e}")).collect();
    text += &format!("event {};\n", events.join(", "));
    for step in &plan.steps {
        let op = match &step.op {
            Op::Fill {
                buffer,
                range: (start, end),
            } => format!("fill d{buffer}[{start}..{end}] with 1.0;"),
            Op::Copy {
                from,
                from_range: (start, end),
                to,
                to_start,
            } => {
                format!(
                    "copy d{from}[{start}..{end}] -> d{to}[{to_start}..{}];",
                    to_start + end - start
                )
            }
            Op::Record { event } => format!("record e{event};"),
            Op::Wait { event } => format!("wait e{event};"),
            Op::Sync {
                stream: Some(stream),
            } => format!("sync s{stream};"),
            Op::Sync { stream: None } => "sync all;".to_owned(),
        };
        text += &match step.stream {
            Some(stream) => format!("on s{stream} {{ {op} }}\n"),
            None => format!("{op}\n"),
        };
    }
    text + "}\n"
}

/// (buffer, start, end, writes) of each access of a step.
fn accesses(op: &Op) -> Vec<(usize, usize, usize, bool)> {
    match *op {
        Op::Fill {
            buffer,
            range: (start, end),
        } => vec![(buffer, start, end, true)],
        Op::Copy {
            from,
            from_range: (start, end),
            to,
            to_start,
        } => {
            vec![
                (from, start, end, false),
                (to, to_start, to_start + end - start, true),
            ]
        }
        _ => Vec::new(),
    }
}

/// Whether the plan races, by explicit graph and transitive closure.
fn oracle_finds_race(plan: &GeneratedPlan) -> bool {
    let steps = &plan.steps;
    let n = steps.len();
    let mut reach = vec![vec![false; n]; n];
    let mut last_on_lane: Vec<Option<usize>> = vec![None; plan.streams + 1];
    let mut last_host: Option<usize> = None;
    let mut last_record: Vec<Option<usize>> = vec![None; plan.events];
    for (i, step) in steps.iter().enumerate() {
        let lane = step.stream.map_or(0, |s| s + 1);
        let mut edge = |from: Option<usize>| {
            if let Some(from) = from {
                reach[from][i] = true;
            }
        };
        edge(last_on_lane[lane]);
        // The host issues every op after the host's earlier ops.
        edge(last_host);
        match step.op {
            Op::Wait { event } => edge(last_record[event]),
            Op::Sync {
                stream: Some(stream),
            } => edge(last_on_lane[stream + 1]),
            Op::Sync { stream: None } => {
                (1..=plan.streams).for_each(|lane| edge(last_on_lane[lane]))
            }
            _ => {}
        }
        if let Op::Record { event } = step.op {
            last_record[event] = Some(i);
        }
        last_on_lane[lane] = Some(i);
        if step.stream.is_none() {
            last_host = Some(i);
        }
    }
    // Warshall's transitive closure.
    for k in 0..n {
        let through = reach[k].clone();
        for row in reach.iter_mut() {
            if row[k] {
                for (cell, &next) in row.iter_mut().zip(&through) {
                    *cell |= next;
                }
            }
        }
    }
    for j in 0..n {
        for i in 0..j {
            if steps[i].stream == steps[j].stream || reach[i][j] {
                continue;
            }
            for &(buffer_a, start_a, end_a, writes_a) in &accesses(&steps[i].op) {
                for &(buffer_b, start_b, end_b, writes_b) in &accesses(&steps[j].op) {
                    if buffer_a == buffer_b
                        && (writes_a || writes_b)
                        && start_a < end_b
                        && start_b < end_a
                    {
                        return true;
                    }
                }
            }
        }
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn checker_agrees_with_the_oracle(plan in plan()) {
        let text = source(&plan);
        let input: Input = syn::parse_str(&text).expect("generated plans parse");
        let verdict = analyze(&input.plans[0]);
        let expected = oracle_finds_race(&plan);
        if let Err(errors) = &verdict {
            for error in errors.clone() {
                let message = error.to_string();
                // Every race report's fix orders the two ops.
                prop_assert!(
                    ["help: declare an event", "help: add `sync", "help: add `wait"].iter().any(|fix| message.contains(fix)),
                    "an error other than a race: {message}\n{text}"
                );
            }
        }
        prop_assert_eq!(verdict.is_err(), expected, "checker and oracle disagree on\n{}", text);
    }
}

/// A generator that made only racy (or only race-free) plans would make the
/// agreement above meaningless.
#[test]
fn the_generator_makes_both_racy_and_race_free_plans() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let samples = 1000;
    let racy = (0..samples)
        .filter(|_| oracle_finds_race(&plan().new_tree(&mut runner).unwrap().current()))
        .count();
    assert!(
        (samples / 10..samples * 9 / 10).contains(&racy),
        "{racy} of {samples} plans race"
    );
}
