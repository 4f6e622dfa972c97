//! A run's collectives, once its steps are resolved: which steps are the
//! parts of one collective (every GPU of the plan takes part in each once,
//! and in a plan of several GPUs, each send meets a receive), and the
//! order that queues each collective's parts together, as one NCCL group
//! (see `schedule.rs`).

use super::info::{MALFORMED, Op, PlanInfo};
use super::schedule::{self, Needs};
use super::step::Step;
use crate::error::Fault;
use crate::nccl::Kind;
use std::collections::HashMap;

/// How a run's steps are queued: their order, and for each (in that
/// order) that is a collective's part, whether it opens its NCCL group
/// and whether it closes it.
pub(crate) struct Gathered {
    pub order: Vec<usize>,
    pub groups: Vec<Option<(bool, bool)>>,
}

/// The steps of a run (`sites`: each one's op; `gpus`: each one's GPU;
/// `ranks`: how many GPUs the plan's communicators are on); an error
/// names the step it is about.
pub(crate) fn gather(
    info: &PlanInfo,
    steps: &[&Step],
    sites: &[u16],
    gpus: &[u16],
    ranks: usize,
) -> Result<Gathered, (usize, Fault)> {
    let collective = |site: u16| match info.ops.get(usize::from(site)).map(|def| &def.op) {
        Some(Op::Collective(collective)) => Some(collective),
        _ => None,
    };
    if !sites.iter().any(|&site| collective(site).is_some()) {
        return Ok(Gathered {
            order: (0..steps.len()).collect(),
            groups: vec![None; steps.len()],
        });
    }
    // A group's ops are consecutive, so its first is its lowest.
    let mut first_of_group: HashMap<u16, u16> = HashMap::new();
    for (site, def) in info.ops.iter().enumerate() {
        if let Op::Collective(c) = &def.op {
            first_of_group.entry(c.group).or_insert(site as u16);
        }
    }
    // A GPU's n-th time through a group is its part of the group's n-th
    // collective: NCCL matches the ranks' calls in the order they come.
    let mut rounds: HashMap<(u16, u16), usize> = HashMap::new();
    let mut numbers: HashMap<(u16, usize), usize> = HashMap::new();
    let mut together = vec![None; steps.len()];
    // By collective: its parts, (step, GPU).
    let mut parts: Vec<Vec<(usize, u16)>> = Vec::new();
    for (step, (&site, &gpu)) in sites.iter().zip(gpus).enumerate() {
        let Some(c) = collective(site) else { continue };
        let round = rounds.entry((c.group, gpu)).or_insert(0);
        if first_of_group.get(&c.group) == Some(&site) {
            *round += 1;
        }
        let Some(round) = round.checked_sub(1) else {
            return Err((step, MALFORMED));
        };
        let number = *numbers.entry((c.group, round)).or_insert_with(|| {
            parts.push(Vec::new());
            parts.len() - 1
        });
        together[step] = Some(number);
        parts[number].push((step, gpu));
    }
    for collective_parts in &parts {
        every_gpu_once(sites, collective_parts, ranks)?;
        if ranks > 1 {
            parts_agree(steps, sites, collective_parts)?;
            sends_meet_receives(steps, collective_parts)?;
        }
    }
    let needs: Vec<Needs> = steps
        .iter()
        .zip(&together)
        .map(|(step, &together)| Needs {
            stream: step.queued_on(),
            event: step.event(),
            together,
        })
        .collect();
    let order = schedule::order(&needs).map_err(|step| {
        let why = "the GPUs' parts of this collective wait for each other: one waits, through its stream or an event, for work queued after another's part, so the GPUs would wait for ever";
        (step, Fault::Collective(why.to_owned()))
    })?;
    let groups = (0..order.len())
        .map(|at| {
            let of = |at: Option<usize>| at.and_then(|at| order.get(at)).and_then(|&s| together[s]);
            let this = together[order[at]]?;
            let opens = of(at.checked_sub(1)) != Some(this);
            let closes = of(Some(at + 1)) != Some(this);
            Some((opens, closes))
        })
        .collect();
    Ok(Gathered { order, groups })
}

/// Each op of the collective's group, once on each of the `ranks` GPUs.
fn every_gpu_once(
    sites: &[u16],
    parts: &[(usize, u16)],
    ranks: usize,
) -> Result<(), (usize, Fault)> {
    let mut by_site: HashMap<u16, Vec<u16>> = HashMap::new();
    for &(step, gpu) in parts {
        by_site.entry(sites[step]).or_default().push(gpu);
    }
    for &(step, _) in parts {
        let mut queued = by_site[&sites[step]].clone();
        queued.sort_unstable();
        let once =
            queued.len() == ranks && queued.iter().enumerate().all(|(i, &g)| usize::from(g) == i);
        if !once {
            let list: Vec<String> = queued.iter().map(u16::to_string).collect();
            let why = format!(
                "every GPU of the plan takes part in a collective once, and this one is queued on GPU {} of the plan's {ranks}: NCCL would wait for the others for ever",
                list.join(", ")
            );
            return Err((step, Fault::Collective(why)));
        }
    }
    Ok(())
}

/// The GPUs' parts of one op of a collective other than sends and
/// receives agree on what NCCL matches: the collective, its reduction or
/// root, the element count and type. (Steps resolved at each run are
/// plans on one GPU, with nothing to compare.)
fn parts_agree(
    steps: &[&Step],
    sites: &[u16],
    parts: &[(usize, u16)],
) -> Result<(), (usize, Fault)> {
    let mut first: HashMap<u16, (Kind, usize, u32, u16)> = HashMap::new();
    for &(step, gpu) in parts {
        let Step::Collective { call, .. } = &steps[step] else {
            continue;
        };
        if matches!(call.kind, Kind::Send(_) | Kind::Recv(_)) {
            continue;
        }
        let this = (call.kind, call.elements, call.datatype, gpu);
        let (kind, elements, datatype, other) = *first.entry(sites[step]).or_insert(this);
        if (kind, elements, datatype) != (call.kind, call.elements, call.datatype) {
            let why = format!(
                "the GPUs' parts of this collective differ: GPU {other}'s is {kind:?} of {elements} elements, GPU {gpu}'s {:?} of {}; NCCL would wait for ever or mix them up",
                call.kind, call.elements
            );
            return Err((step, Fault::Collective(why)));
        }
    }
    Ok(())
}

/// In a group of sends and receives among the plan's GPUs, the sends from
/// GPU `a` to `b` meet the receives on `b` from `a` one by one, in the
/// order they are queued, each of as many elements of one type: NCCL
/// pairs them so, and waits for ever for one that has no match.
fn sends_meet_receives(steps: &[&Step], parts: &[(usize, u16)]) -> Result<(), (usize, Fault)> {
    // By (from, to): the sends' and the receives' (elements, type), in
    // order, each with its step.
    type Pair = (usize, usize);
    type Matched = Vec<((usize, u32), usize)>;
    let mut sends: HashMap<Pair, Matched> = HashMap::new();
    let mut receives: HashMap<Pair, Matched> = HashMap::new();
    for &(step, gpu) in parts {
        let Step::Collective { call, .. } = &steps[step] else {
            continue;
        };
        let (gpu, what) = (usize::from(gpu), (call.elements, call.datatype));
        match call.kind {
            Kind::Send(peer) => sends.entry((gpu, peer)).or_default().push((what, step)),
            Kind::Recv(peer) => receives.entry((peer, gpu)).or_default().push((what, step)),
            _ => {}
        }
    }
    let pairs: std::collections::BTreeSet<Pair> =
        sends.keys().chain(receives.keys()).copied().collect();
    for (from, to) in pairs {
        let (sent, received) = (
            sends.get(&(from, to)).map_or(&[][..], Vec::as_slice),
            receives.get(&(from, to)).map_or(&[][..], Vec::as_slice),
        );
        let unmatched = (0..sent.len().max(received.len())).find_map(|k| {
            match (sent.get(k), received.get(k)) {
                (Some(s), Some(r)) if s.0 == r.0 => None,
                (Some(&((elements, _), step)), _) => Some((elements, step)),
                (None, Some(&((elements, _), step))) => Some((elements, step)),
                (None, None) => None,
            }
        });
        if let Some((elements, step)) = unmatched {
            let why = format!(
                "the sends from GPU {from} to GPU {to} and the receives on GPU {to} from GPU {from} do not match one by one, in order (one of {elements} elements has no match of as many of its type): NCCL would wait for ever"
            );
            return Err((step, Fault::Collective(why)));
        }
    }
    Ok(())
}
