//! Races: two ops on different lanes (streams, or a stream and the host)
//! touch overlapping ranges of one buffer, at least one of them writes (or
//! allocates, or frees), and nothing orders them. Each race is reported
//! once, at the earlier op, with the `record`/`wait` or `sync` that would
//! order them; races that one `wait` orders (one forgotten `wait` in a
//! pipeline leaves several pairs of ops unordered) are one error, the
//! `wait` its help, the other pairs its notes. A `wait` is offered only
//! where the checks, run again on the plan with it, find those races gone.
//!
//! Cost: the happens-before test is O(1) per pair (see `order.rs`), and
//! every pair of accesses to one buffer is tested once, cheapest test
//! first: O(Σ accesses(b)²) over the buffers b, plus O(ops × lanes) for the
//! clocks. The `checker` benchmark parses and checks a 1000-op plan over 8
//! streams in 11 ms (16 buffers) to 19 ms (one buffer, every access against
//! every other), well inside the 100 ms a build can spare.

use super::{Facts, line, rules_on};
use crate::errors::Errors;
use crate::ir::{Access, BufferId, EventId, Lane, Mode, Op, OpId, OpKind, Plan, StreamId};
use proc_macro2::Span;
use std::cell::RefCell;
use std::collections::HashSet;

/// The fixes whose effect a plan's races are rerun for, at most: each
/// costs the checks once more, on a plan with errors.
const MAX_FIXES_TRIED: usize = 6;
/// Races past which no fix is tried, and each is reported with its own
/// help: so many unordered pairs are no one forgotten `wait`, and trying
/// fixes on the plan that has them would cost the checks of a large plan
/// several times over (`benches/pathological`'s 40 streams of tangled
/// ranges: 0.3 s, 3.4 s with fixes tried).
const MAX_RACES_GROUPED: usize = 24;

/// A race found, held until every race check has run (see [`report`]).
pub struct Race {
    span: Span,
    message: String,
    help: String,
    /// The two ops and the buffer, for a note: "`a` (line 3) and `b`
    /// (line 5), on `d`".
    pair: String,
    /// What may order the two: first a `wait` for an event the plan
    /// records on the earlier op's stream after it, then, between two
    /// iterations sharing an element of a set, a new set of events.
    fixes: Vec<Fix>,
}

/// A change of the plan that may order races, in the plan's op ids (not
/// those of a loop's two iterations).
#[derive(Clone, Copy, PartialEq)]
enum Fix {
    /// `wait event` on op `before`'s stream, just before it, `event`
    /// recorded after op `after` on that op's stream.
    Wait {
        event: EventId,
        before: OpId,
        after: OpId,
    },
    /// The `record` op `record`, which op `before`'s stream waits for,
    /// moved to op `after`'s stream, just after it.
    MoveRecord {
        record: OpId,
        before: OpId,
        after: OpId,
    },
    /// A new event, recorded on op `after`'s stream after it and waited
    /// for on op `before`'s stream before it.
    Signal { before: OpId, after: OpId },
    /// A new set of events, one per element of the set of buffers
    /// `buffer`: recorded on op `after`'s stream after it (its stream's
    /// last use of the element in the loop's body), and waited for on op
    /// `before`'s stream before it (its first), so that an iteration
    /// waits for the one before it that used the same element.
    Handoff {
        buffer: BufferId,
        before: OpId,
        after: OpId,
    },
    /// `sync stream` on the host just before op `before`, which uses what
    /// op `after` on `stream` uses.
    Sync {
        stream: StreamId,
        before: OpId,
        after: OpId,
    },
}

impl Fix {
    /// The two ops it orders.
    fn ops(self) -> (OpId, OpId) {
        match self {
            Fix::Wait { after, before, .. }
            | Fix::MoveRecord { after, before, .. }
            | Fix::Signal { after, before }
            | Fix::Handoff { after, before, .. }
            | Fix::Sync { after, before, .. } => (after, before),
        }
    }
}

/// The races the checks found, by the order they found them.
pub type Races = RefCell<Vec<Race>>;

/// What a race is between, for its help.
pub enum Between<'a> {
    /// Two ops of the plan; `through_loop(a, b)`: whether only a loop's
    /// body, which may never run, orders them.
    Ops {
        through_loop: &'a dyn Fn(OpId, OpId) -> bool,
    },
    /// An op of iteration `var` of a loop and one of a later iteration,
    /// which use one element of a set of buffers when `index` is equal
    /// for both (`None`: a buffer that is not a set).
    Iterations {
        var: &'a str,
        index: Option<&'a str>,
        /// The plan's op for each op of the two iterations.
        in_plan: &'a dyn Fn(OpId) -> OpId,
        /// The plan's events: those past them are the later iteration's
        /// own copies.
        events: usize,
        /// How many ops iteration `c` has: the later iteration's follow.
        split: usize,
    },
}

/// Two ops on different lanes (two streams, or a stream and the host)
/// touching overlapping ranges of one buffer, one writing (or allocating,
/// or freeing), that nothing orders.
/// (Into `facts.races`, which [`report`] reports.)
pub fn check_unordered_accesses(facts: &Facts, _: &Errors) {
    let (plan, order) = (facts.plan, &facts.order);
    // A loop may run no iterations: two ops outside it are ordered only if
    // they are without its body too (a `record` in the body orders nothing
    // when the body never runs). A loop that always runs orders them as
    // its body does: iteration `c` stands for the first as for any other.
    let ordered = |a, b| {
        order.happens_before(a, b)
            && (plan.loop_of(a).is_some()
                || plan.loop_of(b).is_some()
                || facts.without_empty_loops.happens_before(a, b))
    };
    let through_loop = |a, b| order.happens_before(a, b) && !ordered(a, b);
    let between = Between::Ops {
        through_loop: &through_loop,
    };
    let all = |_, _, _| true;
    check_pairs(
        plan,
        &facts.accesses,
        &ordered,
        &facts.races,
        &all,
        &between,
    );
}

/// The race check for the pairs of ops `compared` selects, by buffer.
pub fn check_pairs(
    plan: &Plan,
    accesses: &[Vec<Access>],
    ordered: &dyn Fn(OpId, OpId) -> bool,
    races: &Races,
    compared: &dyn Fn(OpId, OpId, BufferId) -> bool,
    between: &Between,
) {
    let mut by_buffer: Vec<Vec<(OpId, &Access)>> = vec![Vec::new(); plan.buffers.len()];
    for (op, op_accesses) in accesses.iter().enumerate() {
        for access in op_accesses {
            by_buffer[access.buffer].push((op, access));
        }
    }
    // One report per op and other lane, with the first op of that lane
    // (in program order) it conflicts with: what orders it before that one
    // orders it before the later ones too.
    let mut first_on_lane: Vec<((OpId, Lane), Use, Use)> = Vec::new();
    for uses in &by_buffer {
        for (later_index, &(later, later_access)) in uses.iter().enumerate() {
            for &(earlier, earlier_access) in &uses[..later_index] {
                if earlier == later
                    || !compared(earlier, later, later_access.buffer)
                    || plan.ops[earlier].lane == plan.ops[later].lane
                    || !earlier_access.mode.conflicts_with(later_access.mode)
                    || ordered(earlier, later)
                    || !plan.atoms.may_overlap(
                        &earlier_access.range,
                        &later_access.range,
                        &[&earlier_access.facts, &later_access.facts],
                    )
                {
                    continue;
                }
                let key = (earlier, plan.ops[later].lane);
                let pair = ((earlier, earlier_access), (later, later_access));
                match first_on_lane.iter_mut().find(|(seen, ..)| *seen == key) {
                    Some(kept) if later < (kept.2).0 => (kept.1, kept.2) = pair,
                    Some(_) => {}
                    None => first_on_lane.push((key, pair.0, pair.1)),
                }
            }
        }
    }
    for (_, earlier, later) in first_on_lane {
        races
            .borrow_mut()
            .push(found(plan, earlier, later, between));
    }
}

type Use<'a> = (OpId, &'a Access);

/// The race between two ops, with its help.
fn found(plan: &Plan, (earlier, first): Use, (later, second): Use, between: &Between) -> Race {
    let buffer = &plan.buffers[first.buffer].name;
    let (a, b) = (&plan.ops[earlier], &plan.ops[later]);
    let (a_lane, b_lane) = (plan.lane_name(a.lane), plan.lane_name(b.lane));
    let (a_line, b_line) = (line(a.span), line(b.span));

    let fix = match (between, a.lane, b.lane) {
        (
            Between::Iterations {
                var,
                index: Some(index),
                ..
            },
            _,
            _,
        ) => {
            // The plan's own words: the set's count, an event name it does
            // not use, and its own set of streams if it has one.
            let count = (plan.buffers[first.buffer].array.as_ref())
                .map_or_else(|| "k".to_owned(), |set| set.count_text.clone());
            let event = unused_name(plan, "done");
            let one_stream = match a.lane {
                Lane::Stream(stream) if plan.streams[stream].array.is_some() => {
                    format!(", `on {}[{index}]`", plan.streams[stream].name)
                }
                _ => String::new(),
            };
            format!(
                "make iteration `{var}′` wait for iteration `{var}` when both use `{buffer}[{index}]`: declare \
                 `event {event}[{count}];`, `record {event}[{index}];` on {a_lane} after the earlier op's \
                 last use of it, and `wait {event}[{index}];` on {b_lane} before the later op; or run both on one \
                 stream of a set indexed the same way{one_stream}"
            )
        }
        (
            Between::Iterations {
                var, index: None, ..
            },
            _,
            _,
        ) => format!(
            "give each iteration its own part of `{buffer}`, a range that moves with `{var}` (`[{var} * m..({var} + 1) * m]`), \
             or a set of buffers, one per element (`device {buffer}[k]: ...;` used as `{buffer}[{var} % k]`)"
        ),
        (Between::Ops { .. }, a_lane, b_lane) => match (a_lane, b_lane) {
            // `sync` is offered as a fix `report` checks first; this is the
            // help where it does not order the two.
            (Lane::Stream(_), Lane::Host) => format!(
                "make the host wait for {} before `{}`: `sync` waits for a stream's work",
                plan.lane_name(a.lane),
                b.label
            ),
            // A `wait` for an event the plan records, or a new event, is
            // offered as a fix `report` checks first; this is the help
            // where none orders the two.
            (Lane::Stream(from), Lane::Stream(to)) => {
                match misplaced_record(plan, earlier, later) {
                    Some(record) => misplaced_help(plan, record, earlier),
                    // A loop's events are its own: order what follows the
                    // loop by its stream, after the loop.
                    None if plan.loop_of(earlier).is_some() && plan.loop_of(later).is_none() => {
                        after_the_loop(plan, from, to, &b.label)
                    }
                    None => format!(
                        "declare an event (`event {event};`), `record {event};` on `{}` after `{}`, and `wait {event};` on `{}` before `{}`",
                        plan.streams[from].name,
                        a.label,
                        plan.streams[to].name,
                        b.label,
                        event = unused_name(plan, "done"),
                    ),
                }
            }
            // The host issues its ops in order, so a host op is ordered before
            // every op after it; were that ever not so, `sync all` orders all.
            (Lane::Host, _) => format!(
                "order `{}` after it: `sync all;` makes the host wait for every stream",
                b.label
            ),
        },
    };

    let message = match (first.mode, second.mode) {
        (Mode::Alloc, _) => format!(
            "`{buffer}` is allocated here on {a_lane}, and `{}` on {b_lane} (line {b_line}) may use it before the allocation is done",
            b.label
        ),
        (_, Mode::Free) => format!(
            "`{}` on {a_lane} uses `{buffer}`, and `{}` on {b_lane} (line {b_line}) may free it meanwhile",
            a.label, b.label
        ),
        _ if b.lane == Lane::Host => format!(
            "`{}` on {a_lane} {} `{buffer}`, and `{}` (line {b_line}) {} it on the host without waiting for the stream",
            a.label,
            first.mode.verb(),
            b.label,
            second.mode.verb()
        ),
        _ => format!(
            "`{}` on {a_lane} {} `{buffer}` at {}, and `{}` on {b_lane} (line {b_line}) {} it at {}, with nothing ordering the two",
            a.label,
            first.mode.verb(),
            first.shown(&plan.atoms),
            b.label,
            second.mode.verb(),
            second.shown(&plan.atoms)
        ),
    };
    // Ordered only through a loop's body, which may never run.
    let through_loop = match between {
        Between::Ops { through_loop } => through_loop(earlier, later),
        Between::Iterations { .. } => false,
    };
    let fix = match through_loop {
        true => format!(
            "{fix} (the `for` loop between them may run no iterations, and then what its body records orders nothing)"
        ),
        false => fix,
    };
    // The plan's ids of the two ops, and a `wait` that may order them.
    let (in_plan, events) = match between {
        Between::Iterations {
            in_plan, events, ..
        } => (*in_plan, *events),
        Between::Ops { .. } => (&(|op| op) as &dyn Fn(OpId) -> OpId, plan.events.len()),
    };
    let mut fixes = Vec::new();
    // The host waits for a stream, where the stream is one (not a set's,
    // which a loop indexes). A loop between them does not matter: the
    // `sync` is the host's, outside it.
    if let (Lane::Stream(stream), Lane::Host, Between::Ops { .. }) = (a.lane, b.lane, between)
        && plan.streams[stream].array.is_none()
    {
        fixes.push(Fix::Sync {
            stream,
            before: later,
            after: earlier,
        });
    }
    if let (Lane::Stream(_), Lane::Stream(_)) = (a.lane, b.lane) {
        // An event of the later iteration's own is not the plan's.
        if let Some(event) =
            recorded_between(plan, earlier, later).filter(|&event| event < events && !through_loop)
        {
            fixes.push(Fix::Wait {
                event,
                before: in_plan(later),
                after: in_plan(earlier),
            });
        }
        match between {
            Between::Iterations {
                index: Some(_),
                split,
                ..
            } => fixes.extend(handoff(
                plan,
                first.buffer,
                (earlier, later),
                *split,
                in_plan,
            )),
            Between::Ops { .. } if !through_loop => {
                if let Some(record) = misplaced_record(plan, earlier, later) {
                    fixes.push(Fix::MoveRecord {
                        record,
                        before: later,
                        after: earlier,
                    });
                }
                fixes.push(Fix::Signal {
                    before: later,
                    after: earlier,
                });
            }
            _ => {}
        }
    }
    Race {
        span: first.span,
        message,
        help: fix,
        pair: format!(
            "`{}` (line {a_line}) and `{}` (line {b_line}), on `{buffer}`",
            a.label, b.label
        ),
        fixes,
    }
}

/// Between iteration `c`'s op `earlier` and iteration `c′`'s op `later`
/// (ids of the two iterations side by side, `c`'s the first `split`;
/// `in_plan` the plan's), which share an element of the set of buffers
/// `buffer`: an event set recorded after the last use of the element on
/// `earlier`'s stream in the body, and waited for before the first use on
/// `later`'s.
fn handoff(
    view: &Plan,
    buffer: BufferId,
    (earlier, later): (OpId, OpId),
    split: usize,
    in_plan: &dyn Fn(OpId) -> OpId,
) -> Option<Fix> {
    view.buffers[buffer].array.as_ref()?;
    let uses = |op: OpId| {
        view.accesses(op)
            .iter()
            .any(|access| access.buffer == buffer)
    };
    let lane_of = |op: OpId| view.ops[op].lane;
    // `later`'s own op in iteration `c`, on the stream it has there.
    let later_lane = lane_of(later.checked_sub(split)?);
    let after = (0..split)
        .rev()
        .find(|&op| lane_of(op) == lane_of(earlier) && uses(op))?;
    let before = (0..split).find(|&op| lane_of(op) == later_lane && uses(op))?;
    Some(Fix::Handoff {
        buffer,
        before: in_plan(before),
        after: in_plan(after),
    })
}

/// Reports the races the checks found: those one fix orders as one
/// error, at the first of them, with that fix as its help and the others
/// as notes; the rest each on its own, with its own help. A fix counts as
/// ordering a race only where the race checks, run again on the plan
/// changed by it, no longer find the race; the fix that orders most goes
/// first, and of two that order as many, a `wait` for an event the plan
/// has before a new set of events.
pub fn report(facts: &Facts, errors: &Errors) {
    let races = facts.races.take();
    if races.is_empty() {
        return;
    }
    let plan = facts.plan;
    let mut fixes: Vec<Fix> = Vec::new();
    // What the plan has first: its events waited for, its records moved.
    let all = || races.iter().flat_map(|race| &race.fixes);
    let in_order = (all().filter(|fix| matches!(fix, Fix::Wait { .. })))
        .chain(all().filter(|fix| matches!(fix, Fix::MoveRecord { .. })))
        .chain(all());
    if races.len() <= MAX_RACES_GROUPED {
        for &fix in in_order {
            if !fixes.contains(&fix) && fixes.len() < MAX_FIXES_TRIED {
                fixes.push(fix);
            }
        }
    }
    let key = |race: &Race| {
        (
            race.span.start().line,
            race.span.start().column,
            race.message.clone(),
        )
    };
    // What the plan's other rules say already: a fix may not add to it.
    let said = errors.messages();
    let had: HashSet<_> = races.iter().map(key).collect();
    let ordered_by: Vec<(Fix, Vec<usize>)> = fixes
        .into_iter()
        .map(|fix| {
            let (other, left) = rules_on(&fixed(plan, fix));
            let left: HashSet<_> = left.iter().map(key).collect();
            // A moved `record` may leave what it marked unmarked.
            if other.iter().any(|error| !said.contains(error)) || !left.is_subset(&had) {
                return (fix, Vec::new());
            }
            let ordered = (0..races.len())
                .filter(|&i| !left.contains(&key(&races[i])))
                .collect();
            (fix, ordered)
        })
        .collect();
    let mut reported = vec![false; races.len()];
    let mut declared = Vec::new();
    loop {
        let unreported = |ordered: &Vec<usize>| ordered.iter().filter(|&&i| !reported[i]).count();
        // The most, and of those the first tried.
        let best = (ordered_by.iter().enumerate())
            .filter(|(_, (_, ordered))| unreported(ordered) > 0)
            .max_by_key(|(tried, (_, ordered))| (unreported(ordered), std::cmp::Reverse(*tried)));
        let Some((_, (fix, ordered))) = best else {
            break;
        };
        let group: Vec<usize> = ordered.iter().copied().filter(|&i| !reported[i]).collect();
        for &i in &group {
            reported[i] = true;
        }
        // First the race the fix orders directly, if it is one.
        let direct = |&&i: &&usize| races[i].fixes.iter().any(|f| f.ops() == fix.ops());
        let first = group.iter().find(direct).copied().unwrap_or(group[0]);
        let first = &races[first];
        let help = fix_help(plan, *fix, &mut declared);
        let mut text = format!("{}\n\nhelp: {}", first.message, help);
        let others: Vec<&str> = (group.iter())
            .map(|&i| &races[i])
            .filter(|race| !std::ptr::eq(*race, first))
            .map(|race| race.pair.as_str())
            .collect();
        if !others.is_empty() {
            text.push_str("\n\nnote: the same change orders these too:");
            for pair in others {
                text.push_str("\n      - ");
                text.push_str(pair);
            }
        }
        errors.push(syn::Error::new(first.span, text));
    }
    for (race, _) in races
        .iter()
        .zip(&reported)
        .filter(|(_, reported)| !**reported)
    {
        errors.at(race.span, &race.message, &race.help);
    }
}

/// `plan` changed by `fix`.
fn fixed(plan: &Plan, fix: Fix) -> Plan {
    let op = |plan: &Plan, kind: OpKind, at: OpId, event: EventId| Op {
        label: match kind {
            OpKind::Record(_) => format!("record {}", event_written(plan, event)),
            _ => format!("wait {}", event_written(plan, event)),
        },
        kind,
        lane: plan.ops[at].lane,
        span: plan.ops[at].span,
    };
    match fix {
        Fix::Wait { event, before, .. } => {
            plan.with_op_before(op(plan, OpKind::Wait(event), before, event), before)
        }
        Fix::MoveRecord { record, after, .. } => {
            let mut moved = plan.ops[record].clone();
            moved.lane = plan.ops[after].lane;
            let after = if after > record { after - 1 } else { after };
            plan.without_op(record).with_op_after(moved, after)
        }
        Fix::Sync { stream, before, .. } => {
            let sync = Op {
                label: format!("sync {}", plan.streams[stream].name),
                kind: OpKind::Sync(Some(stream)),
                lane: Lane::Host,
                span: plan.ops[before].span,
            };
            plan.with_op_before(sync, before)
        }
        Fix::Signal { before, after } | Fix::Handoff { before, after, .. } => {
            let mut plan = plan.clone();
            let event = plan.events.len();
            plan.events.push(syn::Ident::new(
                &unused_name(&plan, "done"),
                proc_macro2::Span::call_site(),
            ));
            let set = match fix {
                Fix::Handoff { buffer, .. } => plan.buffers[buffer].array.clone(),
                _ => None,
            };
            plan.event_arrays.push(set);
            let record = op(&plan, OpKind::Record(event), after, event);
            let plan = plan.with_op_after(record, after);
            let before = if before > after { before + 1 } else { before };
            plan.with_op_before(op(&plan, OpKind::Wait(event), before, event), before)
        }
    }
}

/// The help for `fix`, in the plan's words. A new event gets a name
/// neither the plan nor an earlier help of it (`declared`) uses, so that
/// every help of a plan can be applied together.
fn fix_help(plan: &Plan, fix: Fix, declared: &mut Vec<String>) -> String {
    let mut new_event = || {
        let name = unused_name_besides(plan, "done", declared);
        declared.push(name.clone());
        name
    };
    match fix {
        Fix::Wait {
            event,
            before,
            after,
        } => wait_help(plan, event, before, after),
        Fix::MoveRecord { record, after, .. } => move_help(plan, record, after),
        Fix::Sync { stream, before, .. } => format!(
            "add `sync {};` before {}",
            plan.streams[stream].name,
            op_named(plan, before)
        ),
        Fix::Signal { before, after } => {
            let event = new_event();
            format!(
                "declare `event {event};`, add `record {event};` on {} after {}, and `wait {event};` on {} before {}",
                plan.lane_name(plan.ops[after].lane),
                op_named(plan, after),
                plan.lane_name(plan.ops[before].lane),
                op_named(plan, before),
            )
        }
        Fix::Handoff {
            buffer,
            before,
            after,
        } => {
            let set = &plan.buffers[buffer];
            let array = set.array.as_ref();
            let count = array.map_or("k", |a| a.count_text.as_str());
            let index = array
                .and_then(|a| a.index_text.as_deref())
                .unwrap_or("c % k");
            let event = new_event();
            format!(
                "hand `{name}[{index}]` from each iteration to the next that uses it: declare `event {event}[{count}];`, \
                 add `record {event}[{index}];` on {} after {}, and `wait {event}[{index}];` on {} before {}",
                plan.lane_name(plan.ops[after].lane),
                op_named(plan, after),
                plan.lane_name(plan.ops[before].lane),
                op_named(plan, before),
                name = set.name,
            )
        }
    }
}

/// The fix for an op after a loop that must wait for stream `from`'s part
/// of the loop: an event recorded after the loop, or, where `from` is a
/// set (used only in the loop), the host waiting for the set.
fn after_the_loop(plan: &Plan, from: StreamId, to: StreamId, later: &str) -> String {
    let (from, to) = (&plan.streams[from], &plan.streams[to].name);
    match from.array {
        Some(_) => format!(
            "make the host wait for the set after the loop, before `{later}`, with `sync {};` (a set of streams is used only in the loop)",
            from.name
        ),
        None => format!(
            "declare an event (`event done;`); after the loop, `record done;` on `{}` and `wait done;` on `{to}` \
             before `{later}` (an event recorded in the loop orders only its iterations)",
            from.name
        ),
    }
}

/// An event recorded on `earlier`'s stream after it, and before `later`
/// in program order (so a `wait` for it before `later` orders the two).
///
/// Not one recorded in a loop for an op outside it: a loop's events are
/// its own, and its body may never run.
fn recorded_between(plan: &Plan, earlier: OpId, later: OpId) -> Option<EventId> {
    let outside = plan.loop_of(later).is_none();
    (earlier + 1..later).find_map(|id| {
        let op = &plan.ops[id];
        match op.kind {
            OpKind::Record(event)
                if op.lane == plan.ops[earlier].lane
                    && !(outside && plan.loop_of(id).is_some()) =>
            {
                Some(event)
            }
            _ => None,
        }
    })
}

/// `add wait e[i];` on `before`'s stream before it, `e` recorded after
/// `after` on its stream: the event as the plan writes it, a set's element
/// by the loop's index.
fn wait_help(plan: &Plan, event: EventId, before: OpId, after: OpId) -> String {
    let name = &plan.events[event];
    let written = match plan.event_arrays[event]
        .as_ref()
        .and_then(|set| set.index_text.as_ref())
    {
        Some(index) => format!("{name}[{index}]"),
        None => name.to_string(),
    };
    format!(
        "add `wait {written};` on {} before {}: `{name}` is recorded on {} after `{}`",
        plan.lane_name(plan.ops[before].lane),
        op_named(plan, before),
        plan.lane_name(plan.ops[after].lane),
        plan.ops[after].label
    )
}

/// Op `op` as a help names it: its label, with its line where another op
/// of its lane has the same label, so that an edit has one place.
fn op_named(plan: &Plan, op: OpId) -> String {
    let this = &plan.ops[op];
    let twice = (plan.ops.iter().enumerate())
        .any(|(other, o)| other != op && o.lane == this.lane && o.label == this.label);
    match twice {
        true => format!("`{}` (line {})", this.label, line(this.span)),
        false => format!("`{}`", this.label),
    }
}

/// Event `event` as a `record` or `wait` names it: a set's element by the
/// loop's index, `freed[c % r]`.
fn event_written(plan: &Plan, event: EventId) -> String {
    let name = &plan.events[event];
    match (plan.event_arrays[event].as_ref()).and_then(|set| set.index_text.as_ref()) {
        Some(index) => format!("{name}[{index}]"),
        None => name.to_string(),
    }
}

/// Where `later`'s stream already waits for an event between `earlier`
/// and `later`, but the `record` it waits for does not follow `earlier` on
/// `earlier`'s stream: the help to move that record, rather than to declare
/// a new event. (A wait issued before `earlier` could not wait for it
/// wherever its record went.)
fn misplaced_record(plan: &Plan, earlier: OpId, later: OpId) -> Option<OpId> {
    let (write_lane, wait_lane) = (plan.ops[earlier].lane, plan.ops[later].lane);
    let Lane::Stream(_) = write_lane else {
        return None;
    };
    // The last wait on the later op's stream before it, and the record it
    // waits for (the last one issued before the wait).
    let (wait, event) =
        plan.ops[..later]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(index, op)| match op.kind {
                OpKind::Wait(event) if op.lane == wait_lane => Some((index, event)),
                _ => None,
            })?;
    if wait < earlier || (plan.loop_of(wait).is_some() && plan.loop_of(later).is_none()) {
        return None;
    }
    let (record, op) = plan.ops[..wait]
        .iter()
        .enumerate()
        .rev()
        .find(|(_, op)| matches!(op.kind, OpKind::Record(e) if e == event))?;
    (op.lane != write_lane || record < earlier).then_some(record)
}

/// The help to move `record` after op `after`, on its stream.
fn move_help(plan: &Plan, record: OpId, after: OpId) -> String {
    let OpKind::Record(event) = plan.ops[record].kind else {
        return String::new();
    };
    let (name, record_line) = (event_written(plan, event), line(plan.ops[record].span));
    let after_op = after;
    let (write_lane, after) = (plan.ops[after].lane, &plan.ops[after].label);
    let from = plan.lane_name(write_lane);
    if plan.ops[record].lane != write_lane {
        format!(
            "`record {name};` is on {} (line {record_line}), so `wait {name};` does not wait for `{after}`: \
             record it on {from} after `{after}`",
            plan.lane_name(plan.ops[record].lane)
        )
    } else {
        format!(
            "move `record {name};` (line {record_line}) after {} on {from}: \
             recorded before it, it does not mark that work done",
            op_named(plan, after_op)
        )
    }
}

/// What is wrong with a `record` that a moved one would mend, where
/// moving it is not a fix the checks confirmed: said, not offered as an
/// edit.
fn misplaced_help(plan: &Plan, record: OpId, after: OpId) -> String {
    let OpKind::Record(event) = plan.ops[record].kind else {
        return String::new();
    };
    // On another stream: said so, which is no edit either.
    if plan.ops[record].lane != plan.ops[after].lane {
        return move_help(plan, record, after);
    }
    format!(
        "`record {};` (line {}) does not mark `{}` done: record the event after the work it marks, on {}",
        event_written(plan, event),
        line(plan.ops[record].span),
        plan.ops[after].label,
        plan.lane_name(plan.ops[after].lane),
    )
}

/// `name`, or `name_2`, `name_3`... : the first the plan does not use.
fn unused_name(plan: &Plan, name: &str) -> String {
    unused_name_besides(plan, name, &[])
}

/// [`unused_name`], and none of `besides` either.
fn unused_name_besides(plan: &Plan, name: &str, besides: &[String]) -> String {
    let taken = |candidate: &str| {
        let names = (plan.params.iter().map(|p| &p.name))
            .chain(plan.buffers.iter().map(|b| &b.name))
            .chain(plan.streams.iter().map(|s| &s.name))
            .chain(plan.events.iter())
            .chain(plan.kernels.iter().map(|k| &k.name))
            .chain(plan.gpus.iter().map(|g| &g.name))
            .chain(plan.ranks.iter().map(|r| &r.name));
        names.map(ToString::to_string).any(|used| used == candidate)
            || besides.iter().any(|used| used == candidate)
    };
    (1..)
        .map(|n| match n {
            1 => name.to_owned(),
            n => format!("{name}_{n}"),
        })
        .find(|candidate| !taken(candidate))
        .unwrap_or_else(|| name.to_owned())
}
