//! The order a run's steps are queued in: program order, except that the
//! ranks' parts of one collective are queued together, as one NCCL group.
//!
//! One thread driving several GPUs must hand NCCL every rank's part of a
//! collective between `ncclGroupStart` and `ncclGroupEnd`, or the first
//! part waits on the host for the others. In a plan those parts are ops of
//! different loop iterations (rank `i`'s in iteration `i`), with other ops
//! between them. So the steps are put in an order that keeps everything
//! the GPU can tell apart — each stream's order, each event's records and
//! waits, and the host's turns (host steps, synchronous copies, `sync`)
//! against everything else — and otherwise stays as close to program
//! order as it can: the order of a stable topological sort, with each
//! collective's parts as one node placed where its last part can go.
//!
//! Where no such order exists, a part waits (through streams and events)
//! for work queued after another rank's part of the same collective: the
//! GPUs would wait for each other for ever, and `new` says so instead.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What keeps a step in its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Needs {
    /// The stream it is queued on; `None` for the host's turn (a host
    /// step, a synchronous copy, `sync`), which keeps its place among all
    /// other steps.
    pub stream: Option<u16>,
    /// The event it records or waits for.
    pub event: Option<u16>,
    /// The collective it is one rank's part of: steps with the same number
    /// are queued together.
    pub together: Option<usize>,
}

/// The steps' positions in the order to queue them, each collective's
/// parts next to each other and in program order among themselves; or,
/// where the parts of a collective wait for each other, its first part.
pub(crate) fn order(steps: &[Needs]) -> Result<Vec<usize>, usize> {
    // Nothing to gather: program order, as written.
    if steps.iter().all(|step| step.together.is_none()) {
        return Ok((0..steps.len()).collect());
    }
    let (node_of, members) = nodes(steps);
    let edges = edges(steps);
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); members.len()];
    let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); members.len()];
    let mut waiting_for = vec![0usize; members.len()];
    for (before, after) in edges {
        let (a, b) = (node_of[before], node_of[after]);
        if a != b {
            successors[a].push(b);
            predecessors[b].push(a);
            waiting_for[b] += 1;
        }
    }
    // Nodes by their first step: with nothing else to decide, program order.
    let mut ready: BinaryHeap<Reverse<(usize, usize)>> = (0..members.len())
        .filter(|&node| waiting_for[node] == 0)
        .map(|node| Reverse((members[node][0], node)))
        .collect();
    let mut order = Vec::with_capacity(steps.len());
    while let Some(Reverse((_, node))) = ready.pop() {
        order.extend_from_slice(&members[node]);
        for &next in &successors[node] {
            waiting_for[next] -= 1;
            if waiting_for[next] == 0 {
                ready.push(Reverse((members[next][0], next)));
            }
        }
    }
    if order.len() == steps.len() {
        return Ok(order);
    }
    Err(on_a_cycle(&members, &predecessors, &waiting_for))
}

/// Where the sort stopped: the first step of a collective on a cycle of
/// the nodes left (`waiting_for` each still something), not one merely
/// queued after a cycle, whose parts do not wait for each other.
fn on_a_cycle(members: &[Vec<usize>], predecessors: &[Vec<usize>], waiting_for: &[usize]) -> usize {
    let left = |node: usize| waiting_for[node] > 0;
    // Every node left waits for another left: walking back from one
    // must come round to a node it passed.
    let mut seen = vec![None; members.len()];
    let mut walk = Vec::new();
    let mut node = (0..members.len()).find(|&node| left(node));
    while let Some(at) = node {
        if let Some(from) = seen[at] {
            // The cycle: `walk[from..]`. It has a collective's node, since
            // a step alone waits only for steps written before it.
            let walked: &[usize] = &walk[from..];
            return (walked.iter())
                .filter(|&&node| members[node].len() > 1)
                .map(|&node| members[node][0])
                .min()
                .unwrap_or(members[at][0]);
        }
        seen[at] = Some(walk.len());
        walk.push(at);
        node = predecessors[at]
            .iter()
            .copied()
            .find(|&before| left(before));
    }
    0
}

/// Each step's node, and each node's steps in program order: a step alone,
/// or every part of one collective.
fn nodes(steps: &[Needs]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut node_of = Vec::with_capacity(steps.len());
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut collective_node = std::collections::HashMap::new();
    for (index, step) in steps.iter().enumerate() {
        let node = match step.together {
            Some(together) => *collective_node.entry(together).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            }),
            None => {
                members.push(Vec::new());
                members.len() - 1
            }
        };
        members[node].push(index);
        node_of.push(node);
    }
    (node_of, members)
}

/// Pairs `(a, b)` of steps where `a` must be queued before `b`; enough
/// that every such pair follows from them. O(steps) of them.
fn edges(steps: &[Needs]) -> Vec<(usize, usize)> {
    use std::collections::HashMap;
    let mut edges = Vec::new();
    let mut last_on_stream: HashMap<u16, usize> = HashMap::new();
    let mut last_of_event: HashMap<u16, usize> = HashMap::new();
    let mut last_turn: Option<usize> = None;
    let mut since_turn: Vec<usize> = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        match step.stream {
            // The host's turn: after everything before it, before
            // everything after it.
            None => {
                edges.extend(since_turn.drain(..).map(|before| (before, index)));
                edges.extend(last_turn.map(|turn| (turn, index)));
                last_turn = Some(index);
            }
            Some(stream) => {
                edges.extend(last_turn.map(|turn| (turn, index)));
                edges.extend(last_on_stream.insert(stream, index).map(|b| (b, index)));
                since_turn.push(index);
            }
        }
        if let Some(event) = step.event {
            edges.extend(last_of_event.insert(event, index).map(|b| (b, index)));
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn on(stream: u16) -> Needs {
        Needs {
            stream: Some(stream),
            event: None,
            together: None,
        }
    }

    fn part(stream: u16, together: usize) -> Needs {
        Needs {
            together: Some(together),
            ..on(stream)
        }
    }

    fn event(stream: u16, event: u16) -> Needs {
        Needs {
            event: Some(event),
            ..on(stream)
        }
    }

    #[test]
    fn without_collectives_the_order_is_program_order() {
        let steps = [
            on(0),
            on(1),
            event(0, 3),
            Needs {
                stream: None,
                event: None,
                together: None,
            },
            on(1),
        ];
        assert_eq!(order(&steps), Ok(vec![0, 1, 2, 3, 4]));
        assert_eq!(order(&[]), Ok(vec![]));
    }

    #[test]
    fn a_data_parallel_step_gathers_the_all_reduce_and_keeps_the_download_after_it() {
        // for i in 0..2 { on s[i] { copy; launch; all_reduce; copy back } }
        let steps = [
            on(0),
            on(0),
            part(0, 7),
            on(0),
            on(1),
            on(1),
            part(1, 7),
            on(1),
        ];
        assert_eq!(order(&steps), Ok(vec![0, 1, 4, 5, 2, 6, 3, 7]));
    }

    #[test]
    fn parts_that_wait_for_each_other_are_refused_at_the_first() {
        // Rank 1's part waits (through `up`) for what follows rank 0's.
        // `up` (stream 2) waits for rank 0's result before uploading rank 1's input.
        let stuck = [
            part(0, 1),
            event(0, 5), // record reduced on s[0]
            event(2, 5), // wait reduced on up
            event(2, 6), // record loaded on up
            event(1, 6), // wait loaded on s[1]
            part(1, 1),
        ];
        assert_eq!(order(&stuck), Err(0));
    }

    #[test]
    fn a_collective_queued_after_a_cycle_is_not_the_one_blamed() {
        // Collective 2's parts (steps 0 and 6) do not wait for each other;
        // its second waits (through stream 1) for collective 1's, whose
        // parts do (through events 5 and 6, as above).
        let steps = [
            part(3, 2),
            part(0, 1),
            event(0, 5),
            event(2, 5),
            event(2, 6),
            event(1, 6),
            part(1, 1),
            part(1, 2),
        ];
        assert_eq!(order(&steps), Err(1));
    }

    /// The oracle: whether step `a` must come before step `b` (`a < b`).
    fn must_precede(steps: &[Needs], a: usize, b: usize) -> bool {
        let (x, y) = (steps[a], steps[b]);
        x.stream.is_none()
            || y.stream.is_none()
            || x.stream == y.stream
            || (x.event.is_some() && x.event == y.event)
    }

    fn needs() -> impl Strategy<Value = Vec<Needs>> {
        let one = (
            prop::option::weighted(0.9, 0u16..4),
            prop::option::weighted(0.3, 0u16..3),
            prop::option::weighted(0.3, 0usize..3),
        )
            .prop_map(|(stream, event, together)| Needs {
                // A collective's part is on a stream and touches no event.
                stream: stream.or(together.map(|_| 0)),
                event: event.filter(|_| together.is_none()),
                together,
            });
        prop::collection::vec(one, 0..14)
    }

    proptest! {
        #[test]
        fn the_order_keeps_every_dependency_and_gathers_each_collective(steps in needs()) {
            let group = |i: usize| steps[i].together;
            match order(&steps) {
                Ok(order) => {
                    let mut sorted = order.clone();
                    sorted.sort_unstable();
                    prop_assert_eq!(sorted, (0..steps.len()).collect::<Vec<_>>());
                    let mut position = vec![0; steps.len()];
                    for (at, &step) in order.iter().enumerate() {
                        position[step] = at;
                    }
                    for b in 0..steps.len() {
                        for a in 0..b {
                            let gathered = group(a).is_some() && group(a) == group(b);
                            if must_precede(&steps, a, b) && !gathered {
                                prop_assert!(position[a] < position[b], "{a} before {b}: {order:?}");
                            }
                            if gathered {
                                prop_assert!(position[a] < position[b]);
                            }
                        }
                    }
                    // Each collective's parts are next to each other.
                    for together in 0..3 {
                        let at: Vec<usize> = (0..steps.len())
                            .filter(|&i| group(i) == Some(together))
                            .map(|i| position[i])
                            .collect();
                        if let (Some(first), Some(last)) = (at.iter().min(), at.iter().max()) {
                            prop_assert_eq!(last - first + 1, at.len());
                        }
                    }
                    if steps.iter().all(|s| s.together.is_none()) {
                        prop_assert_eq!(order, (0..steps.len()).collect::<Vec<_>>());
                    }
                }
                Err(stuck) => {
                    // A real cycle, through the collective named: some
                    // part of it reaches, through steps outside it,
                    // another part of it.
                    let on_cycle = on_cycles(&steps);
                    prop_assert!(
                        group(stuck).is_some_and(|t| on_cycle[steps.len() + t]),
                        "{stuck} of {steps:?}"
                    );
                }
            }
            if on_cycles(&steps).contains(&true) {
                prop_assert!(order(&steps).is_err());
            }
        }
    }

    /// Which points lie on a cycle of the dependencies, the collectives each
    /// taken as one point (step `i` is point `i`, collective `t` point
    /// `steps.len() + t`): reachability over all pairs (Floyd–Warshall),
    /// nothing shared with `order`.
    fn on_cycles(steps: &[Needs]) -> Vec<bool> {
        let n = steps.len();
        let key = |i: usize| match steps[i].together {
            Some(t) => n + t,
            None => i,
        };
        let size = n + 3;
        let mut reach = vec![vec![false; size]; size];
        for b in 0..n {
            for a in 0..b {
                if must_precede(steps, a, b) && key(a) != key(b) {
                    reach[key(a)][key(b)] = true;
                }
            }
        }
        for k in 0..size {
            let through = reach[k].clone();
            for row in reach.iter_mut() {
                if row[k] {
                    for (to, &from_k) in row.iter_mut().zip(&through) {
                        *to |= from_k;
                    }
                }
            }
        }
        (0..size).map(|i| reach[i][i]).collect()
    }
}
