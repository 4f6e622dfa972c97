//! The race checker against a brute-force oracle, on random plans.
//!
//! Each case is a random plan (2 to 8 streams, events, syncs, fills and
//! copies on ranges of a few buffers), written as source text and run
//! through the whole front end. The oracle builds the happens-before graph
//! edge by edge (program order on each stream, issue order from the host,
//! record -> wait, stream -> sync), takes its transitive closure, and looks
//! for two accesses to overlapping ranges of one buffer from different
//! lanes, at least one a write, with no path between them. The checker must
//! reject the plan exactly when the oracle finds such a pair.
//!
//! Ranges are literal in one test and symbolic in the other: sums,
//! products and quotients of the plan's sizes `a`, `b` and `c`, each
//! occurrence written in one of several equivalent forms. The oracle
//! evaluates them with plain `usize` arithmetic over a few hundred size
//! assignments ([`assignments`]); two accesses may overlap if some make both
//! ranges valid (computable without wrapping, inside the buffer, start
//! before end, as the run time requires before anything runs) and share an
//! element. It shares no code with the checker's algebra.

use memplan_macros_core::{analyze, syntax::Input};
use proptest::prelude::*;
use std::collections::HashMap;

#[path = "common/help.rs"]
mod help;

const BUFFERS: usize = 3;
const LEN: usize = 64;
/// Sizes the oracle tries: every assignment of `0..=SMALL` to the sizes a
/// plan uses, and the first up to `LARGE` (see [`assignments`]).
const SMALL: usize = 6;
const LARGE: usize = 64;

/// A size expression, evaluated by the oracle and printed for the checker.
#[derive(Clone, Debug)]
enum Expr {
    Lit(usize),
    Size(usize),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
}

use Expr::{Lit, Size};

fn add(a: Expr, b: Expr) -> Expr {
    Expr::Add(Box::new(a), Box::new(b))
}
fn sub(a: Expr, b: Expr) -> Expr {
    Expr::Sub(Box::new(a), Box::new(b))
}
fn mul(a: Expr, b: Expr) -> Expr {
    Expr::Mul(Box::new(a), Box::new(b))
}
fn div(a: Expr, b: Expr) -> Expr {
    Expr::Div(Box::new(a), Box::new(b))
}

const SIZE_NAMES: [&str; 3] = ["a", "b", "c"];

impl Expr {
    /// The value for these sizes, as the run time computes it: `None` if
    /// a step wraps or divides by zero.
    fn eval(&self, sizes: &[usize]) -> Option<usize> {
        match self {
            Lit(value) => Some(*value),
            Size(index) => Some(sizes[*index]),
            Expr::Add(a, b) => a.eval(sizes)?.checked_add(b.eval(sizes)?),
            Expr::Sub(a, b) => a.eval(sizes)?.checked_sub(b.eval(sizes)?),
            Expr::Mul(a, b) => a.eval(sizes)?.checked_mul(b.eval(sizes)?),
            Expr::Div(a, b) => a.eval(sizes)?.checked_div(b.eval(sizes)?),
        }
    }

    /// Source text, with the parentheses Rust's precedence needs.
    fn text(&self) -> String {
        let (op, a, b, level) = match self {
            Lit(value) => return value.to_string(),
            Size(index) => return SIZE_NAMES[*index].to_owned(),
            Expr::Add(a, b) => ("+", a, b, 1),
            Expr::Sub(a, b) => ("-", a, b, 1),
            Expr::Mul(a, b) => ("*", a, b, 2),
            Expr::Div(a, b) => ("/", a, b, 2),
        };
        let wrap = |e: &Expr, right: bool| {
            let inner = match e {
                Lit(_) | Size(_) => 3,
                Expr::Add(..) | Expr::Sub(..) => 1,
                Expr::Mul(..) | Expr::Div(..) => 2,
            };
            // Left-associative: a right operand of equal level needs them.
            if inner < level || (right && inner == level) {
                format!("({})", e.text())
            } else {
                e.text()
            }
        };
        format!("{} {op} {}", wrap(a, false), wrap(b, true))
    }
}

/// A half-open range of a buffer.
#[derive(Clone, Debug)]
struct Range {
    start: Expr,
    end: Expr,
}

impl Range {
    fn literal(start: usize, end: usize) -> Range {
        Range {
            start: Lit(start),
            end: Lit(end),
        }
    }

    fn text(&self) -> String {
        format!("{}..{}", self.start.text(), self.end.text())
    }
}

/// An op of a generated plan, as the oracle sees it.
#[derive(Clone, Debug)]
enum Op {
    Fill {
        buffer: usize,
        range: Range,
    },
    Copy {
        from: usize,
        from_range: Range,
        to: usize,
        to_range: Range,
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
    /// How many of `a`, `b`, `c` the plan takes.
    sizes: usize,
    /// How many of them its ranges use (the oracle tries only those).
    used: usize,
    /// Each buffer's length.
    lens: Vec<Expr>,
    streams: usize,
    events: usize,
    steps: Vec<Step>,
}

/// A plan step before it is made valid: ranges are still to be placed.
#[derive(Clone, Debug)]
enum RawOp<R> {
    Fill(usize, R),
    Copy(usize, R, usize, u8),
    Record(usize),
    Wait(usize),
    Sync(Option<usize>),
}

fn raw_step<R: Clone + std::fmt::Debug>(
    streams: usize,
    events: usize,
    range: impl Strategy<Value = R> + Clone + 'static,
) -> impl Strategy<Value = (Option<usize>, RawOp<R>)> {
    let on_stream = (0..streams).prop_map(Some);
    prop_oneof![
        4 => (on_stream.clone(), 0..BUFFERS, range.clone()).prop_map(|(s, b, r)| (s, RawOp::Fill(b, r))),
        4 => (on_stream.clone(), 0..BUFFERS, range.clone(), 0..BUFFERS, any::<u8>())
            .prop_map(|(s, from, r, to, at)| (s, RawOp::Copy(from, r, to, at))),
        3 => (on_stream.clone(), 0..events).prop_map(|(s, e)| (s, RawOp::Record(e))),
        4 => (on_stream, 0..events).prop_map(|(s, e)| (s, RawOp::Wait(e))),
        2 => prop::option::of(0..streams).prop_map(|s| (None, RawOp::Sync(s))),
        1 => (0..BUFFERS, range).prop_map(|(b, r)| (None, RawOp::Fill(b, r))),
    ]
}

/// Shapes random steps into a plan whose only possible errors are races:
/// every buffer is filled first, and every `wait` follows a `record` of its
/// event. `copy` turns a source range and a number into the copy's ranges,
/// or `None` to drop it.
fn make_valid<R>(
    raw: Vec<(Option<usize>, RawOp<R>)>,
    lens: &[Expr],
    fill: impl Fn(&R) -> Range,
    copy: impl Fn(usize, &R, usize, u8) -> Option<(Range, Range)>,
) -> Vec<Step> {
    let mut steps: Vec<Step> = (0..BUFFERS)
        .map(|buffer| Step {
            stream: None,
            op: Op::Fill {
                buffer,
                range: Range {
                    start: Lit(0),
                    end: lens[buffer].clone(),
                },
            },
        })
        .collect();
    let mut recorded = Vec::new();
    for (stream, raw) in raw {
        let op = match raw {
            RawOp::Fill(buffer, range) => Op::Fill {
                buffer,
                range: fill(&range),
            },
            RawOp::Copy(from, range, to, at) => match copy(from, &range, to, at) {
                Some((from_range, to_range)) => Op::Copy {
                    from,
                    from_range,
                    to,
                    to_range,
                },
                None => continue,
            },
            RawOp::Record(event) => {
                recorded.push(event);
                Op::Record { event }
            }
            RawOp::Wait(event) if !recorded.contains(&event) => continue,
            RawOp::Wait(event) => Op::Wait { event },
            RawOp::Sync(stream) => Op::Sync { stream },
        };
        steps.push(Step { stream, op });
    }
    steps
}

/// Plans on literal ranges of buffers of [`LEN`] elements.
fn literal_plan() -> impl Strategy<Value = GeneratedPlan> {
    let range = (0..LEN, 1..=LEN / 2).prop_map(|(start, len)| (start.min(LEN - len), len));
    (2..=8usize, 1..=4usize).prop_flat_map(move |(streams, events)| {
        prop::collection::vec(raw_step(streams, events, range.clone()), 1..40).prop_map(
            move |raw| {
                let lens = vec![Lit(LEN); BUFFERS];
                let steps = make_valid(
                    raw,
                    &lens,
                    |&(start, len)| Range::literal(start, start + len),
                    |from, &(start, len), to, at| {
                        let to_start = (at as usize).min(LEN - len);
                        let overlaps_itself =
                            from == to && to_start < start + len && start < to_start + len;
                        (!overlaps_itself).then(|| {
                            (
                                Range::literal(start, start + len),
                                Range::literal(to_start, to_start + len),
                            )
                        })
                    },
                );
                GeneratedPlan {
                    sizes: 0,
                    used: 0,
                    lens,
                    streams,
                    events,
                    steps,
                }
            },
        )
    })
}

/// The unit every symbolic range of a plan is measured in, written in the
/// `form`-th of its equivalent spellings: sums, products and quotients of
/// two or three sizes.
fn unit(kind: u8, form: u8) -> Expr {
    let (a, b, c) = (Size(0), Size(1), Size(2));
    let flip = form % 2 == 1;
    match kind % 8 {
        0 => a,
        1 if flip => mul(b, a),
        1 => mul(a, b),
        2 => match form % 3 {
            0 => mul(mul(a, b), c),
            1 => mul(c, mul(b, a)),
            _ => mul(b, mul(c, a)),
        },
        3 if flip => add(b, a),
        3 => add(a, b),
        4 if flip => add(mul(c, a.clone()), mul(a, b)),
        4 => mul(a, add(b, c)),
        5 if flip => add(add(a.clone(), b), a),
        5 => add(mul(Lit(2), a), b),
        6 => div(if flip { mul(b, a) } else { mul(a, b) }, c),
        _ => div(if flip { add(b, a) } else { add(a, b) }, Lit(2)),
    }
}

/// The size a share of unit `kind` divides by, as in `n / k`-sized
/// chunks: one that is not a factor of the unit, which would make the
/// share a product of fewer sizes (`a * b / a` is `b`). Whether `2 * a *
/// b` lies in `3 * b..4 * b` is a question of divisibility, beyond the
/// linear arithmetic the language reference promises.
fn share_divisor(kind: u8) -> Expr {
    match kind % 8 {
        0 => Size(1),
        1 => Size(2),
        2 => Lit(3),
        4 => Size(1),
        _ => Size(0),
    }
}

/// How many of `a`, `b`, `c` unit `kind` and its share use: its first ones.
fn sizes_used(kind: u8) -> usize {
    match kind % 8 {
        0 | 3 | 5 | 7 => 2,
        _ => 3,
    }
}

/// `count` of `part`, in the `form`-th spelling.
fn times(count: usize, part: Expr, form: u8) -> Expr {
    match (count, form % 4) {
        (0, _) => Lit(0),
        (1, _) => part,
        (_, 0) => mul(Lit(count), part),
        (_, 1) => mul(part, Lit(count)),
        (_, 2) => add(times(count - 1, part.clone(), form / 4), part),
        _ => mul(add(Lit(count - 1), Lit(1)), part),
    }
}

/// A symbolic range: `steps` parts of a unit (whole, halves, quarters or a
/// size's share), at `at` parts from the start, or one element, or a
/// prefix past the middle; written in spellings drawn from `form`.
#[derive(Clone, Debug)]
struct Shape {
    kind: u8,
    at: usize,
    count: usize,
    form: u8,
}

/// The kinds of shape a plan uses: a plan measures its ranges either in
/// whole units, halves and quarters, or only in shares of its unit
/// (`unit / k`, `k` a size), elements beside them. Whether `3 * (a /
/// b)..4 * (a / b)` meets `2 * a..2 * a + 1` turns on `b` being a whole
/// number (`a / b` is `a` or at most half of it), beyond the linear
/// arithmetic the language reference promises; a plan that mixes the two
/// may be refused, and is not generated here.
fn family(shape_kind: u8, plan_kind: u8) -> u8 {
    let shares = plan_kind >= 8;
    match shape_kind % 6 {
        0..=3 | 5 if shares => 3,
        3 => 2,
        kind => kind,
    }
}

/// The part a shape of `family` counts in, in the unit, with how many fit
/// in the buffer (`4 * unit`).
fn part(family: u8, plan_kind: u8, unit: Expr) -> (Expr, usize) {
    let unit_kind = plan_kind % 8;
    match family {
        1 => (div(unit, Lit(2)), 8),
        2 => (div(unit, Lit(4)), 16),
        _ if plan_kind >= 8 => (div(unit, share_divisor(unit_kind)), 4),
        _ => (unit, 4),
    }
}

/// The range of `shape` in a plan of `plan_kind`: its unit is `plan_kind %
/// 8`; from 8 on it counts in shares (see [`family`]).
fn symbolic_range(shape: &Shape, plan_kind: u8) -> Range {
    let (form, unit_kind) = (shape.form, plan_kind % 8);
    let unit = || self::unit(unit_kind, form);
    let family = family(shape.kind, plan_kind);
    let (part, fit) = part(family, plan_kind, unit());
    // The count does not depend on `at`, so a copy's two ranges agree.
    let count = 1 + shape.count % fit;
    let at = shape.at % (fit - count + 1);
    match family {
        // One element, just after or just before a boundary.
        4 if form % 2 == 0 => {
            let at = shape.at % fit;
            let start = times(at, part, form);
            Range {
                end: add(start.clone(), Lit(1)),
                start,
            }
        }
        4 => {
            let at = 1 + shape.at % fit;
            let end = times(at, part, form);
            Range {
                start: sub(end.clone(), Lit(1)),
                end,
            }
        }
        // The first half and one more, or the rest from the middle.
        5 => {
            let middle = add(div(unit(), Lit(2)), Lit(1));
            if form % 2 == 0 {
                Range {
                    start: Lit(0),
                    end: middle,
                }
            } else {
                Range {
                    start: middle,
                    end: times(4, unit(), form / 2),
                }
            }
        }
        _ => Range {
            start: times(at, part.clone(), form),
            end: times(at + count, part, form / 3),
        },
    }
}

/// Where a copy of `shape` lands: the same shape at another place, so
/// that the lengths agree as written; `None` when there is no such place.
fn copy_target(shape: &Shape, plan_kind: u8, at: u8) -> Option<Shape> {
    let movable = family(shape.kind, plan_kind) != 5;
    movable.then(|| Shape {
        at: at as usize,
        form: shape.form.wrapping_add(at),
        ..shape.clone()
    })
}

/// Plans on symbolic ranges of buffers of `4 * unit` elements.
fn symbolic_plan() -> impl Strategy<Value = GeneratedPlan> {
    let shape =
        (0..6u8, 0..16usize, 0..16usize, any::<u8>()).prop_map(|(kind, at, count, form)| Shape {
            kind,
            at,
            count,
            form,
        });
    (2..=6usize, 1..=3usize, 0..16u8).prop_flat_map(move |(streams, events, plan_kind)| {
        prop::collection::vec(raw_step(streams, events, shape.clone()), 1..24).prop_map(
            move |raw| {
                let lens: Vec<Expr> = (0..BUFFERS as u8)
                    .map(|buffer| times(4, unit(plan_kind % 8, buffer), buffer))
                    .collect();
                let steps = make_valid(
                    raw,
                    &lens,
                    |shape| symbolic_range(shape, plan_kind),
                    |from, shape, to, at| {
                        let target = copy_target(shape, plan_kind, at)?;
                        // Within one buffer a copy would need its own proof
                        // that the two ranges are apart; the race is what
                        // is tested here.
                        (from != to).then(|| {
                            (
                                symbolic_range(shape, plan_kind),
                                symbolic_range(&target, plan_kind),
                            )
                        })
                    },
                );
                GeneratedPlan {
                    sizes: 3,
                    used: sizes_used(plan_kind % 8),
                    lens,
                    streams,
                    events,
                    steps,
                }
            },
        )
    })
}

fn source(plan: &GeneratedPlan) -> String {
    let sizes: Vec<String> = SIZE_NAMES[..plan.sizes]
        .iter()
        .map(|name| format!("{name}: usize"))
        .collect();
    let mut text = format!("plan P({}) {{\n", sizes.join(", "));
    for (buffer, len) in plan.lens.iter().enumerate() {
        text += &format!("device d{buffer}: [f32; {}];\n", len.text());
    }
    let streams: Vec<String> = (0..plan.streams).map(|s| format!("s{s}")).collect();
    text += &format!("stream {};\n", streams.join(", "));
    let events: Vec<String> = (0..plan.events).map(|e| format!("e{e}")).collect();
    text += &format!("event {};\n", events.join(", "));
    for step in &plan.steps {
        let op = match &step.op {
            Op::Fill { buffer, range } => format!("fill d{buffer}[{}] with 1.0;", range.text()),
            Op::Copy {
                from,
                from_range,
                to,
                to_range,
            } => format!(
                "copy d{from}[{}] -> d{to}[{}];",
                from_range.text(),
                to_range.text()
            ),
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

/// (buffer, range, writes) of each access of a step.
fn accesses(op: &Op) -> Vec<(usize, &Range, bool)> {
    match op {
        Op::Fill { buffer, range } => vec![(*buffer, range, true)],
        Op::Copy {
            from,
            from_range,
            to,
            to_range,
        } => vec![(*from, from_range, false), (*to, to_range, true)],
        _ => Vec::new(),
    }
}

/// The sizes the oracle tries, for plans whose ranges use the first
/// `count` of `a`, `b`, `c`: every assignment of `0..=SMALL` to them, and
/// `a` up to [`LARGE`] with the others at most 2. A witness of an overlap
/// can need a large unit (`3 * u - 1` meets `12 * (u / 4)..13 * (u / 4)`
/// only from `u = 13`), and with the others small the unit of every
/// generated plan takes each value up to [`LARGE`].
fn assignments(count: usize) -> Vec<Vec<usize>> {
    let grid = (0..count).fold(vec![Vec::new()], |partial: Vec<Vec<usize>>, _| {
        partial
            .iter()
            .flat_map(|sizes| {
                (0..=SMALL).map(move |size| {
                    let mut more = sizes.clone();
                    more.push(size);
                    more
                })
            })
            .collect()
    });
    let lines = (count > 0).then(|| {
        (0..=LARGE).flat_map(move |a| {
            (0..3).flat_map(move |b| (0..3).map(move |c| [a, b, c][..count].to_vec()))
        })
    });
    let mut all: Vec<Vec<usize>> = grid
        .into_iter()
        .chain(lines.into_iter().flatten())
        .collect();
    for sizes in &mut all {
        sizes.resize(SIZE_NAMES.len(), 0);
    }
    all.sort();
    all.dedup();
    all
}

/// `start..end` of a range under each assignment, `None` where the run
/// time would refuse it.
type Values = Vec<Option<(usize, usize)>>;

fn evaluate(range: &Range, len: &Expr, all: &[Vec<usize>]) -> Values {
    all.iter()
        .map(|sizes| {
            let (start, end, len) = (
                range.start.eval(sizes)?,
                range.end.eval(sizes)?,
                len.eval(sizes)?,
            );
            (start <= end && end <= len).then_some((start, end))
        })
        .collect()
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
    let all = assignments(plan.used);
    // Each access's range under every assignment, by (step, access).
    let mut values: HashMap<(usize, usize), Values> = HashMap::new();
    let mut value = |step: usize, access: usize, buffer: usize, range: &Range| {
        values
            .entry((step, access))
            .or_insert_with(|| evaluate(range, &plan.lens[buffer], &all))
            .clone()
    };
    for j in 0..n {
        for i in 0..j {
            if steps[i].stream == steps[j].stream || reach[i][j] {
                continue;
            }
            for (x, &(buffer_a, range_a, writes_a)) in accesses(&steps[i].op).iter().enumerate() {
                for (y, &(buffer_b, range_b, writes_b)) in accesses(&steps[j].op).iter().enumerate()
                {
                    if buffer_a != buffer_b || !(writes_a || writes_b) {
                        continue;
                    }
                    let (a, b) = (
                        value(i, x, buffer_a, range_a),
                        value(j, y, buffer_b, range_b),
                    );
                    let overlap = a.iter().zip(&b).any(|pair| match pair {
                        (Some((start_a, end_a)), Some((start_b, end_b))) => {
                            start_a < end_b && start_b < end_a
                        }
                        _ => false,
                    });
                    if overlap {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// The checker's verdict: whether it reports a race, after checking that
/// it reports nothing else.
fn checker_finds_race(plan: &GeneratedPlan) -> Result<bool, TestCaseError> {
    checker_verdict(&source(plan), &[])
}

/// Every race report's fix orders the two ops: an edit the checks
/// accepted, or, where none was tried or none orders them, advice.
const RACE_FIXES: [&str; 9] = [
    "help: declare an event",
    "help: declare `event",
    "help: add `sync",
    "help: add `wait",
    "help: move `record",
    "record it on stream `",
    "help: make the host wait for ",
    "does not mark `",
    "`sync all;` makes the host wait for every stream",
];

/// Whether the checker refuses plan `text`, after checking that every
/// error is a race: its fix is one of [`RACE_FIXES`] or of `more`.
fn checker_verdict(text: &str, more: &[&str]) -> Result<bool, TestCaseError> {
    let input: Input = syn::parse_str(text).expect("generated plans parse");
    let verdict = analyze(&input.plans[0]);
    if let Err(errors) = &verdict {
        for error in errors.clone() {
            let message = error.to_string();
            prop_assert!(
                RACE_FIXES
                    .iter()
                    .chain(more)
                    .any(|fix| message.contains(fix)),
                "an error other than a race: {message}\n{text}"
            );
        }
    }
    Ok(verdict.is_err())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn checker_agrees_with_the_oracle_on_literal_ranges(plan in literal_plan()) {
        let expected = oracle_finds_race(&plan);
        prop_assert_eq!(checker_finds_race(&plan)?, expected, "checker and oracle disagree on\n{}", source(&plan));
    }

    #[test]
    fn checker_agrees_with_the_oracle_on_symbolic_ranges(plan in symbolic_plan()) {
        let expected = oracle_finds_race(&plan);
        prop_assert_eq!(checker_finds_race(&plan)?, expected, "checker and oracle disagree on\n{}", source(&plan));
    }
}

/// A generator that made only racy (or only race-free) plans would make the
/// agreement above meaningless.
#[test]
fn the_generators_make_both_racy_and_race_free_plans() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let samples = 1000;
    let mut racy = |plan: &dyn Fn(&mut proptest::test_runner::TestRunner) -> GeneratedPlan| {
        (0..samples)
            .filter(|_| oracle_finds_race(&plan(&mut runner)))
            .count()
    };
    let literal = racy(&|runner| literal_plan().new_tree(runner).unwrap().current());
    let symbolic = racy(&|runner| symbolic_plan().new_tree(runner).unwrap().current());
    for (name, count) in [("literal", literal), ("symbolic", symbolic)] {
        assert!(
            (samples / 10..samples * 9 / 10).contains(&count),
            "{count} of {samples} {name} plans race"
        );
    }
}

/// The printer keeps the meaning: each spelling of a unit has one value.
#[test]
fn spellings_of_a_unit_agree() {
    for kind in 0..8 {
        for sizes in assignments(3) {
            let values: Vec<Option<usize>> =
                (0..6).map(|form| unit(kind, form).eval(&sizes)).collect();
            assert!(
                values.windows(2).all(|w| w[0] == w[1]),
                "unit {kind} at {sizes:?}: {values:?}"
            );
            for count in 0..5 {
                let counted: Vec<Option<usize>> = (0..16)
                    .map(|form| times(count, unit(kind, 0), form).eval(&sizes))
                    .collect();
                assert!(counted.windows(2).all(|w| w[0] == w[1]));
            }
        }
    }
}

// Loops: random loop bodies over chunk ranges, ranges every iteration
// shares, and sets of streams, events and ring buffers, checked with
// symbolic `k`, `m`, `s` and `r`; the loop runs `k` iterations (maybe
// none), `k + 1`, 2 (at least one, so what its body orders holds after it)
// or `r`. The ring is indexed `c % r`, `(c + 1) % r` (over `0..r`, a
// permutation) or `c % (2 * s)` (whose equal slots fall on equal lanes).
// Chunks may also be clamped at both ends by a run length bounded by the
// plan, `min(c * m, len)..min(c * m + m, len)` with `run len: usize <= k *
// m`: empty past `len`. The oracle unrolls each plan for every small
// assignment of the five and asks the oracle above about each unrolled
// plan; the loop races if any of them does.

/// Where a loop op's range is, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoopPlace {
    /// `d{b}[c * m..(c + 1) * m]`: iteration `c`'s chunk.
    Chunk(usize),
    /// `d{b}[(k + r + 2 + j) * m..(k + r + 3 + j) * m]`: a part every
    /// iteration shares, after every iteration's chunk (at most `k + 1`,
    /// or `r`, of them).
    Shared(usize, usize),
    /// `ring[c % r]`, or as the plan's [`RingIndex`] says.
    Ring,
    /// `d{b}[min(c * m, len)..min(c * m + m, len)]`: iteration `c`'s chunk
    /// of the run's `len <= k * m` elements, empty past them.
    Clamped(usize),
}

/// How the loop indexes its ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RingIndex {
    /// `ring[r]`, `ring[c % r]`.
    Mod,
    /// `ring[r]`, `ring[(c + 1) % r]`.
    Shifted,
    /// `ring[2 * s]`, `ring[c % (2 * s)]`.
    ByLanes,
}

impl RingIndex {
    fn count_text(self) -> &'static str {
        match self {
            RingIndex::Mod | RingIndex::Shifted => "r",
            RingIndex::ByLanes => "2 * s",
        }
    }

    fn text(self) -> &'static str {
        match self {
            RingIndex::Mod => "c % r",
            RingIndex::Shifted => "(c + 1) % r",
            RingIndex::ByLanes => "c % (2 * s)",
        }
    }

    /// How many ring buffers, for `s` lanes and `r`.
    fn count(self, s: usize, r: usize) -> usize {
        match self {
            RingIndex::Mod | RingIndex::Shifted => r,
            RingIndex::ByLanes => 2 * s,
        }
    }

    /// Iteration `c`'s ring buffer.
    fn of(self, c: usize, s: usize, r: usize) -> usize {
        match self {
            RingIndex::Mod => c % r,
            RingIndex::Shifted => (c + 1) % r,
            RingIndex::ByLanes => c % (2 * s),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoopStream {
    Plain(usize),
    /// `lanes[c % s]`.
    Lane,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoopEvent {
    Plain(usize),
    /// `freed[c % r]`.
    Set,
}

#[derive(Clone, Debug)]
enum LoopOp {
    Fill(LoopPlace),
    Copy(LoopPlace, LoopPlace),
    Record(LoopEvent),
    Wait(LoopEvent),
}

#[derive(Clone, Debug)]
enum AfterOp {
    /// `on s0 { fill d{b}[(k + r + 2) * m..(k + r + 3) * m] with 1.0; }`
    FillOnS0(usize),
    /// `on s{s} { fill d{b}[(k + r + 3) * m..(k + r + 4) * m] with 1.0; }`: a part
    /// the loop may also use, which ops before it write too.
    FillShared(usize, usize),
    SyncAll,
    SyncLanes,
}

/// How many iterations the loop runs, as written.
#[derive(Clone, Copy, Debug)]
enum LoopCount {
    /// `k`: maybe none.
    K,
    /// `k + 1`: at least one, whatever `k`.
    KPlusOne,
    /// `2`.
    Two,
    /// `r`.
    R,
}

impl LoopCount {
    fn text(self) -> &'static str {
        match self {
            LoopCount::K => "k",
            LoopCount::KPlusOne => "k + 1",
            LoopCount::Two => "2",
            LoopCount::R => "r",
        }
    }

    fn of(self, k: usize, r: usize) -> usize {
        match self {
            LoopCount::K => k,
            LoopCount::KPlusOne => k + 1,
            LoopCount::Two => 2,
            LoopCount::R => r,
        }
    }
}

#[derive(Clone, Debug)]
struct LoopPlan {
    count: LoopCount,
    ring: RingIndex,
    /// Ops on streams before the loop (fills of shared parts only).
    before: Vec<AfterOp>,
    blocks: Vec<(LoopStream, Vec<LoopOp>)>,
    after: Vec<AfterOp>,
}

fn loop_place() -> impl Strategy<Value = LoopPlace> {
    prop_oneof![
        3 => (0..2usize).prop_map(LoopPlace::Chunk),
        2 => (0..2usize, 0..2usize).prop_map(|(b, j)| LoopPlace::Shared(b, j)),
        3 => Just(LoopPlace::Ring),
        2 => (0..2usize).prop_map(LoopPlace::Clamped),
    ]
}

fn loop_event() -> impl Strategy<Value = LoopEvent> {
    prop_oneof![(0..2usize).prop_map(LoopEvent::Plain), Just(LoopEvent::Set)]
}

fn loop_op() -> impl Strategy<Value = LoopOp> {
    prop_oneof![
        2 => loop_place().prop_map(LoopOp::Fill),
        4 => (loop_place(), loop_place()).prop_map(|(a, b)| LoopOp::Copy(a, b)),
        2 => loop_event().prop_map(LoopOp::Record),
        2 => loop_event().prop_map(LoopOp::Wait),
    ]
}

fn loop_plan() -> impl Strategy<Value = LoopPlan> {
    let stream = prop_oneof![
        (0..2usize).prop_map(LoopStream::Plain),
        Just(LoopStream::Lane)
    ];
    let block = (stream, prop::collection::vec(loop_op(), 1..4));
    let after = prop_oneof![
        (0..2usize).prop_map(AfterOp::FillOnS0),
        (0..2usize, 0..2usize).prop_map(|(s, b)| AfterOp::FillShared(s, b)),
        Just(AfterOp::SyncAll),
        Just(AfterOp::SyncLanes),
    ];
    let before = (0..2usize, 0..2usize).prop_map(|(s, b)| AfterOp::FillShared(s, b));
    let count = prop_oneof![
        2 => Just(LoopCount::K),
        1 => Just(LoopCount::KPlusOne),
        1 => Just(LoopCount::Two),
        1 => Just(LoopCount::R),
    ];
    let ring = prop_oneof![
        2 => Just(RingIndex::Mod),
        1 => Just(RingIndex::Shifted),
        1 => Just(RingIndex::ByLanes),
    ];
    (
        (count, ring),
        prop::collection::vec(before, 0..2),
        prop::collection::vec(block, 1..4),
        prop::collection::vec(after, 0..3),
    )
        .prop_map(|((count, ring), before, blocks, after)| {
            // Only what the other checks accept: a ring buffer is read
            // after the iteration wrote it, and a copy's two places differ.
            let mut written = false;
            let blocks = blocks
                .into_iter()
                .map(|(stream, ops)| {
                    let ops = ops
                        .into_iter()
                        .filter(|op| match *op {
                            LoopOp::Fill(LoopPlace::Ring) => {
                                written = true;
                                true
                            }
                            LoopOp::Copy(from, to) if from == to => false,
                            // A clamped chunk's length is its own.
                            LoopOp::Copy(LoopPlace::Clamped(_), to) => {
                                matches!(to, LoopPlace::Clamped(_))
                            }
                            LoopOp::Copy(_, LoopPlace::Clamped(_)) => false,
                            LoopOp::Copy(LoopPlace::Ring, _) => written,
                            LoopOp::Copy(_, LoopPlace::Ring) => {
                                written = true;
                                true
                            }
                            _ => true,
                        })
                        .collect();
                    (stream, ops)
                })
                .collect();
            LoopPlan {
                count,
                ring,
                before,
                blocks,
                after,
            }
        })
}

fn loop_place_text(place: LoopPlace, ring: RingIndex) -> String {
    match place {
        LoopPlace::Chunk(b) => format!("d{b}[c * m..(c + 1) * m]"),
        LoopPlace::Shared(b, j) => {
            format!("d{b}[(k + r + {}) * m..(k + r + {}) * m]", j + 2, j + 3)
        }
        LoopPlace::Ring => format!("ring[{}]", ring.text()),
        LoopPlace::Clamped(b) => format!("d{b}[min(c * m, len)..min(c * m + m, len)]"),
    }
}

fn loop_event_text(event: LoopEvent) -> String {
    match event {
        LoopEvent::Plain(e) => format!("e{e}"),
        LoopEvent::Set => "freed[c % r]".to_owned(),
    }
}

fn loop_source(plan: &LoopPlan) -> String {
    let mut text = format!(
        "plan L(k: usize, m: usize, s: usize, r: usize, run len: usize <= k * m) {{\n\
        device d0: [f32; (k + r + 4) * m], d1: [f32; (k + r + 4) * m], ring[{}]: [f32; m];\n\
        stream s0, s1, lanes[s];\n\
        event e0, e1, freed[r];\n\
        fill d0 with 1.0;\nfill d1 with 1.0;\n",
        plan.ring.count_text()
    );
    for op in &plan.before {
        text += &outside_text(op);
    }
    text += &format!("for c in 0..{} {{\n", plan.count.text());
    for (stream, ops) in &plan.blocks {
        let on = match stream {
            LoopStream::Plain(s) => format!("s{s}"),
            LoopStream::Lane => "lanes[c % s]".to_owned(),
        };
        text += &format!("on {on} {{\n");
        for op in ops {
            text += &match op {
                LoopOp::Fill(place) => {
                    format!("fill {} with 2.0;\n", loop_place_text(*place, plan.ring))
                }
                LoopOp::Copy(from, to) => {
                    format!(
                        "copy {} -> {};\n",
                        loop_place_text(*from, plan.ring),
                        loop_place_text(*to, plan.ring)
                    )
                }
                LoopOp::Record(event) => format!("record {};\n", loop_event_text(*event)),
                LoopOp::Wait(event) => format!("wait {};\n", loop_event_text(*event)),
            };
        }
        text += "}\n";
    }
    text += "}\n";
    for op in &plan.after {
        text += &outside_text(op);
    }
    text + "}\n"
}

fn outside_text(op: &AfterOp) -> String {
    match op {
        AfterOp::FillOnS0(b) => {
            format!("on s0 {{ fill d{b}[(k + r + 2) * m..(k + r + 3) * m] with 3.0; }}\n")
        }
        AfterOp::FillShared(s, b) => {
            format!("on s{s} {{ fill d{b}[(k + r + 3) * m..(k + r + 4) * m] with 4.0; }}\n")
        }
        AfterOp::SyncAll => "sync all;\n".to_owned(),
        AfterOp::SyncLanes => "sync lanes;\n".to_owned(),
    }
}

/// The loop unrolled for its count of iterations given `k` (`k`, `k + 1`
/// or 2), with `s` lanes, `r` ring buffers and a run of `len`
/// (`m` is 1: it only scales every range), as a plan the oracle
/// above judges: streams `s0, s1, lanes...`, events `e0, e1, freed...`,
/// buffers `d0, d1, ring...`.
fn unrolled(plan: &LoopPlan, k: usize, s: usize, r: usize, len: usize) -> GeneratedPlan {
    let place = |place: LoopPlace, c: usize| match place {
        LoopPlace::Chunk(b) => (b, Range::literal(c, c + 1)),
        LoopPlace::Clamped(b) => (b, Range::literal(c.min(len), (c + 1).min(len))),
        LoopPlace::Shared(b, j) => (b, Range::literal(k + r + 2 + j, k + r + 3 + j)),
        LoopPlace::Ring => (2 + plan.ring.of(c, s, r), Range::literal(0, 1)),
    };
    let event = |event: LoopEvent, c: usize| match event {
        LoopEvent::Plain(e) => e,
        LoopEvent::Set => 2 + c % r,
    };
    let mut lens = vec![Lit(k + r + 4), Lit(k + r + 4)];
    lens.extend((0..plan.ring.count(s, r)).map(|_| Lit(1)));
    let mut steps: Vec<Step> = (0..2)
        .map(|buffer| Step {
            stream: None,
            op: Op::Fill {
                buffer,
                range: Range::literal(0, k + r + 4),
            },
        })
        .collect();
    let outside = |op: &AfterOp, steps: &mut Vec<Step>| match *op {
        AfterOp::FillOnS0(buffer) => steps.push(Step {
            stream: Some(0),
            op: Op::Fill {
                buffer,
                range: Range::literal(k + r + 2, k + r + 3),
            },
        }),
        AfterOp::FillShared(stream, buffer) => steps.push(Step {
            stream: Some(stream),
            op: Op::Fill {
                buffer,
                range: Range::literal(k + r + 3, k + r + 4),
            },
        }),
        AfterOp::SyncAll => steps.push(Step {
            stream: None,
            op: Op::Sync { stream: None },
        }),
        // `sync lanes` is a sync of each of them.
        AfterOp::SyncLanes => steps.extend((0..s).map(|lane| Step {
            stream: None,
            op: Op::Sync {
                stream: Some(2 + lane),
            },
        })),
    };
    for op in &plan.before {
        outside(op, &mut steps);
    }
    for c in 0..plan.count.of(k, r) {
        for (stream, ops) in &plan.blocks {
            let stream = Some(match stream {
                LoopStream::Plain(s) => *s,
                LoopStream::Lane => 2 + c % s,
            });
            for op in ops {
                let op = match *op {
                    LoopOp::Fill(at) => {
                        let (buffer, range) = place(at, c);
                        Op::Fill { buffer, range }
                    }
                    LoopOp::Copy(from, to) => {
                        let ((from, from_range), (to, to_range)) = (place(from, c), place(to, c));
                        Op::Copy {
                            from,
                            from_range,
                            to,
                            to_range,
                        }
                    }
                    LoopOp::Record(e) => Op::Record { event: event(e, c) },
                    LoopOp::Wait(e) => Op::Wait { event: event(e, c) },
                };
                steps.push(Step { stream, op });
            }
        }
    }
    for op in &plan.after {
        outside(op, &mut steps);
    }
    GeneratedPlan {
        sizes: 0,
        used: 0,
        lens,
        streams: 2 + s,
        events: 2 + r,
        steps,
    }
}

/// Races between two iterations have fixes of their own.
const LOOP_FIXES: [&str; 3] = [
    "help: make iteration",
    "help: give each iteration",
    "help: hand `",
];

/// Whether some small `k`, `s`, `r` and `len <= k` make the loop race
/// (`len` only where the loop reads it).
fn oracle_finds_loop_race(plan: &LoopPlan) -> bool {
    let clamped = plan
        .blocks
        .iter()
        .flat_map(|(_, ops)| ops)
        .any(|op| match op {
            LoopOp::Fill(place) => matches!(place, LoopPlace::Clamped(_)),
            LoopOp::Copy(from, to) => {
                matches!(from, LoopPlace::Clamped(_)) || matches!(to, LoopPlace::Clamped(_))
            }
            _ => false,
        });
    (0..=4).any(|k| {
        let lens = if clamped { 0..=k } else { k..=k };
        lens.into_iter().any(|len| {
            (1..=3).any(|s| (1..=3).any(|r| oracle_finds_race(&unrolled(plan, k, s, r, len))))
        })
    })
}

fn checker_finds_loop_race(plan: &LoopPlan) -> Result<bool, TestCaseError> {
    checker_verdict(&loop_source(plan), &LOOP_FIXES)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// Sound: a loop that races for some sizes does not compile.
    #[test]
    fn checker_refuses_every_loop_the_oracle_finds_racy(plan in loop_plan()) {
        if oracle_finds_loop_race(&plan) {
            prop_assert!(checker_finds_loop_race(&plan)?, "a racy loop compiled:\n{}", loop_source(&plan));
        } else {
            checker_finds_loop_race(&plan)?;
        }
    }
}

/// Not only sound but useful: most loops the oracle finds race-free
/// compile. (The checker refuses some: it does not follow a chain of
/// plain events recorded on a set's streams through every iteration.)
#[test]
fn most_race_free_loops_compile() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut free, mut accepted, mut racy) = (0, 0, 0);
    for _ in 0..500 {
        let plan = loop_plan().new_tree(&mut runner).unwrap().current();
        if oracle_finds_loop_race(&plan) {
            racy += 1;
            continue;
        }
        free += 1;
        if !checker_finds_loop_race(&plan).unwrap() {
            accepted += 1;
        }
    }
    eprintln!("loops: {racy} racy, {free} race-free, {accepted} of those compile");
    assert!(
        racy >= 50 && free >= 50,
        "{racy} racy and {free} race-free loops of 500"
    );
    assert!(
        accepted * 10 >= free * 9,
        "only {accepted} of {free} race-free loops compile"
    );
}

/// Loops whose body only passes order from stream to stream (records and
/// waits on the two plain streams), between fills of one part before and
/// after it. Whether the fills race depends on whether the loop runs at
/// all, which the checker decides from its count.
fn ordering_loop_plan() -> impl Strategy<Value = LoopPlan> {
    let count = prop_oneof![
        Just(LoopCount::K),
        Just(LoopCount::KPlusOne),
        Just(LoopCount::Two)
    ];
    let fill = (0..2usize).prop_map(|s| AfterOp::FillShared(s, 0));
    let event = (0..2usize).prop_map(LoopEvent::Plain);
    let op = prop_oneof![
        event.clone().prop_map(LoopOp::Record),
        event.prop_map(LoopOp::Wait)
    ];
    let block = (
        (0..2usize).prop_map(LoopStream::Plain),
        prop::collection::vec(op, 1..3),
    );
    (
        count,
        prop::collection::vec(fill.clone(), 1..3),
        prop::collection::vec(block, 1..4),
        prop::collection::vec(fill, 1..3),
    )
        .prop_map(|(count, before, blocks, after)| LoopPlan {
            count,
            ring: RingIndex::Mod,
            before,
            blocks,
            after,
        })
}

/// Whether each wait in the body follows a record of its event earlier in
/// the body, so that it waits for its own iteration's. (One before any
/// record waits for the iteration before, which the checker takes as
/// ordering nothing: sound, but a loop it orders only from its second
/// iteration on is refused.)
fn waits_follow_records(plan: &LoopPlan) -> bool {
    let mut recorded = Vec::new();
    plan.blocks
        .iter()
        .flat_map(|(_, ops)| ops)
        .all(|op| match op {
            LoopOp::Record(event) => {
                recorded.push(*event);
                true
            }
            LoopOp::Wait(event) => recorded.contains(event),
            _ => true,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// Sound, and exact where each wait follows its record: a loop that
    /// runs for every `k` orders what follows it as its body does; one
    /// that may run no iterations orders nothing.
    #[test]
    fn checker_agrees_with_the_oracle_on_order_through_a_loop(plan in ordering_loop_plan()) {
        let (expected, found) = (oracle_finds_loop_race(&plan), checker_finds_loop_race(&plan)?);
        let exact = waits_follow_records(&plan);
        prop_assert!(
            found == expected || (found && !exact),
            "checker ({found}) and oracle ({expected}) disagree on\n{}",
            loop_source(&plan)
        );
    }
}

/// Loops of chunks alone, clamped by the run's length or not, on plain
/// streams and on a set of lanes, with no events: whether two iterations
/// (or two streams in one) meet turns on the chunks' arithmetic alone,
/// `min` included.
fn chunk_loop_plan() -> impl Strategy<Value = LoopPlan> {
    let place = prop_oneof![
        (0..2usize).prop_map(LoopPlace::Chunk),
        (0..2usize).prop_map(LoopPlace::Clamped),
    ];
    let op = prop_oneof![
        place.prop_map(LoopOp::Fill),
        Just(LoopOp::Copy(LoopPlace::Clamped(0), LoopPlace::Clamped(1))),
        Just(LoopOp::Copy(LoopPlace::Clamped(1), LoopPlace::Clamped(0))),
    ];
    let stream = prop_oneof![
        (0..2usize).prop_map(LoopStream::Plain),
        Just(LoopStream::Lane)
    ];
    let count = prop_oneof![Just(LoopCount::K), Just(LoopCount::KPlusOne)];
    (
        count,
        prop::collection::vec((stream, prop::collection::vec(op, 1..3)), 1..3),
    )
        .prop_map(|(count, blocks)| LoopPlan {
            count,
            ring: RingIndex::Mod,
            before: Vec::new(),
            blocks,
            after: Vec::new(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1_000, ..ProptestConfig::default() })]

    /// Exact on chunks: the checker refuses such a loop when, and only
    /// when, some sizes make it race.
    #[test]
    fn checker_agrees_with_the_oracle_on_clamped_chunks(plan in chunk_loop_plan()) {
        let (expected, found) = (oracle_finds_loop_race(&plan), checker_finds_loop_race(&plan)?);
        prop_assert!(
            found == expected,
            "checker ({found}) and oracle ({expected}) disagree on\n{}",
            loop_source(&plan)
        );
    }
}

/// The errors of plan `text`, as text.
fn error_texts(text: &str) -> Vec<String> {
    let input: Input = syn::parse_str(text).expect("generated plans parse");
    match analyze(&input.plans[0]) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// The plan's text (one op a line, as the help's places are found by
/// line), its errors, and the first help that changes the plan, if any.
fn offered_fix(plan: &LoopPlan) -> (String, Vec<String>, Option<String>) {
    let text = loop_source(plan)
        .replace("{ ", "{\n")
        .replace("; }", ";\n}");
    let errors = error_texts(&text);
    let fix = errors.iter().find_map(|error| {
        let help = &error[error.find("help: ")? + 6..];
        let help = help.lines().next()?;
        ["add `wait", "hand `", "declare `event"]
            .iter()
            .any(|fix| help.starts_with(fix))
            .then(|| help.to_owned())
    });
    (text, errors, fix)
}

/// The property above is not empty: many racy loops are offered a fix.
#[test]
fn many_racy_loops_are_offered_a_fix() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let offered = (0..300)
        .map(|_| loop_plan().new_tree(&mut runner).unwrap().current())
        .filter(|plan| places_are_unique(plan) && offered_fix(plan).2.is_some())
        .count();
    eprintln!("{offered} of 300 loops offered a fix");
    assert!(offered >= 20, "{offered} of 300 loops offered a fix");
}

/// Whether no op is written twice (the same text on one stream, in the
/// loop or out of it): then a help's "on stream `s` before `op`" names
/// one place.
fn places_are_unique(plan: &LoopPlan) -> bool {
    let text = offered_fix(plan).0;
    let ops: Vec<&str> = (text.lines().map(str::trim))
        .filter(|line| line.starts_with("fill ") || line.starts_with("copy "))
        .collect();
    (0..ops.len()).all(|i| !ops[..i].contains(&ops[i]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1_000, ..ProptestConfig::default() })]

    /// A help that changes the plan (a `wait` put back, a `record` moved,
    /// a new event, events handed from iteration to iteration) was checked
    /// before it was shown: applied as written, the race it was offered
    /// for is gone, and the plan has no error but races. (The count of
    /// errors may not fall: races the fix ordered were notes of one.)
    #[test]
    fn a_fix_the_checker_offers_orders_what_it_says(plan in loop_plan()) {
        let (text, before, fix) = offered_fix(&plan);
        if let (Some(fix), true) = (fix, places_are_unique(&plan)) {
            let fixed = help::applied(&text, &fix);
            let after = error_texts(&fixed);
            // What an error says, but where: the help's lines moved the rest.
            let what = |error: &String| {
                let first = error.lines().next().unwrap_or("").to_owned();
                first
                    .split("(line ")
                    .map(|part| part.split_once(')').map_or(part, |(_, rest)| rest))
                    .collect::<String>()
            };
            let offered = before.iter().find(|error| error.contains(fix.as_str())).unwrap();
            prop_assert!(
                !after.iter().any(|error| what(error) == what(offered)),
                "applying `{fix}` left its race:\n{fixed}\n{after:#?}"
            );
            prop_assert!(checker_verdict(&fixed, &LOOP_FIXES).is_ok(), "{fixed}");
        }
    }
}
