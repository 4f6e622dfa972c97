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
    steps: &[Step],
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
        (step, Fault::Nccl(why.to_owned()))
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
            return Err((step, Fault::Nccl(why)));
        }
    }
    Ok(())
}

/// In a collective of sends and receives among the plan's GPUs, each send
/// of `n` elements from GPU `a` to `b` meets a receive of `n` from `a` on
/// `b`: NCCL waits for ever for one that does not.
fn sends_meet_receives(steps: &[Step], parts: &[(usize, u16)]) -> Result<(), (usize, Fault)> {
    let mut sends = Vec::new();
    let mut receives = Vec::new();
    for &(step, gpu) in parts {
        let Step::Collective { call, .. } = &steps[step] else {
            // Resolved at each run: checked when it is.
            continue;
        };
        let gpu = usize::from(gpu);
        match call.kind {
            Kind::Send(peer) => sends.push(((gpu, peer, call.elements, call.datatype), step)),
            Kind::Recv(peer) => receives.push(((peer, gpu, call.elements, call.datatype), step)),
            _ => {}
        }
    }
    sends.sort_unstable();
    receives.sort_unstable();
    let unmatched = sends
        .iter()
        .zip(&receives)
        .find(|(send, receive)| send.0 != receive.0)
        .map(|(send, _)| send)
        .or_else(|| sends.get(receives.len()))
        .or_else(|| receives.get(sends.len()));
    match unmatched {
        None => Ok(()),
        Some(&((from, to, elements, _), step)) => {
            let why = format!(
                "a send of {elements} elements from GPU {from} to GPU {to} has no receive of as many from GPU {from} on GPU {to} in the same collective (or a receive has no send): NCCL would wait for ever"
            );
            Err((step, Fault::Nccl(why)))
        }
    }
}
