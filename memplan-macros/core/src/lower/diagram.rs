//! The plan described for people: a text summary and a Mermaid diagram of
//! its streams, made at compile time and kept as constants on the type.

use crate::ir::{Array, BufferKind, Lane, OpKind, Plan};
use std::fmt::Write as _;

/// The plan for people: its summary in the type's docs and `SUMMARY`, its
/// flowchart in `DIAGRAM`.
pub struct Overview {
    pub summary: String,
    pub mermaid: String,
}

/// `plan`'s overview.
pub fn overview(plan: &Plan) -> Overview {
    Overview {
        summary: summary(plan),
        mermaid: mermaid(plan),
    }
}

/// The signature, the buffers, then every op with its lane.
fn summary(plan: &Plan) -> String {
    let params: Vec<&str> = plan.params.iter().map(|p| p.declared.as_str()).collect();
    let mut out = format!("plan {}({})\n", plan.name, params.join(", "));
    let owned: Vec<String> = plan
        .buffers
        .iter()
        .filter(|b| !matches!(b.kind, BufferKind::Param { .. }))
        .map(|b| format!("{}: {}", counted(&b.name, &b.array), b.declared))
        .collect();
    if !owned.is_empty() {
        let _ = writeln!(out, "  buffers: {}", owned.join(", "));
    }
    if !plan.streams.is_empty() {
        let streams: Vec<String> = plan
            .streams
            .iter()
            .map(|s| counted(&s.name, &s.array))
            .collect();
        let _ = writeln!(out, "  streams: {}", streams.join(", "));
    }
    if !plan.events.is_empty() {
        let events: Vec<String> = plan
            .events
            .iter()
            .zip(&plan.event_arrays)
            .map(|(event, array)| counted(event, array))
            .collect();
        let _ = writeln!(out, "  events: {}", events.join(", "));
    }
    let _ = writeln!(out, "  ops:");
    let lanes: Vec<String> = plan.ops.iter().map(|op| lane_name(plan, op.lane)).collect();
    let width = lanes.iter().map(String::len).max().unwrap_or(0).max(8);
    for (index, op) in plan.ops.iter().enumerate() {
        let repeat = plan.loop_of(index);
        if let Some(repeat) = repeat.filter(|l| l.ops.start == index) {
            let _ = writeln!(out, "         {} {{", repeat.label);
        }
        let indent = if repeat.is_some() { "  " } else { "" };
        let lane = &lanes[index];
        let _ = writeln!(out, "    {index:>3}  {indent}{lane:<width$} {}", op.label);
        if repeat.is_some_and(|l| l.ops.end == index + 1) {
            let _ = writeln!(out, "         }}");
        }
    }
    out
}

/// `lanes[r]`: a declaration with its count, if it is a set.
fn counted(name: &syn::Ident, array: &Option<Array>) -> String {
    match array {
        Some(array) => format!("{name}[{}]", array.count_text),
        None => name.to_string(),
    }
}

/// `host`, `up`, or `lanes[c % r]` for the stream of a set a loop uses.
fn lane_name(plan: &Plan, lane: Lane) -> String {
    let Lane::Stream(stream) = lane else {
        return "host".to_owned();
    };
    let stream = &plan.streams[stream];
    match stream.array.as_ref().and_then(|a| a.index_text.as_ref()) {
        Some(index) => format!("{}[{}]", stream.name, index),
        None => stream.name.to_string(),
    }
}

/// A Mermaid flowchart: a subgraph per lane with its ops in order, dotted
/// edges from each `record` to the `wait`s it releases and from each
/// stream to the `sync` that waits for it.
fn mermaid(plan: &Plan) -> String {
    let mut out = String::from("flowchart TB\n");
    let mut lanes: Vec<Lane> = vec![Lane::Host];
    lanes.extend((0..plan.streams.len()).map(Lane::Stream));
    for lane in lanes {
        let ops: Vec<usize> = (0..plan.ops.len())
            .filter(|&i| plan.ops[i].lane == lane)
            .collect();
        if ops.is_empty() {
            continue;
        }
        let title = match lane {
            Lane::Host => "host".to_owned(),
            Lane::Stream(_) => format!("stream {}", lane_name(plan, lane)),
        };
        let _ = writeln!(out, "  subgraph lane{}[\"{title}\"]", lane.index());
        for &op in &ops {
            let _ = writeln!(
                out,
                "    op{op}[\"{}\"]",
                plan.ops[op].label.replace('"', "'")
            );
        }
        for pair in ops.windows(2) {
            let _ = writeln!(out, "    op{} --> op{}", pair[0], pair[1]);
        }
        let _ = writeln!(out, "  end");
    }
    let mut last_record = vec![None; plan.events.len()];
    let mut last_on_stream = vec![None; plan.streams.len()];
    for (index, op) in plan.ops.iter().enumerate() {
        match &op.kind {
            OpKind::Record(event) => last_record[*event] = Some(index),
            OpKind::Wait(event) => {
                if let Some(record) = last_record[*event] {
                    let _ = writeln!(out, "  op{record} -.->|{}| op{index}", plan.events[*event]);
                }
            }
            OpKind::Sync(stream) => {
                let streams: Vec<usize> = match stream {
                    Some(stream) => vec![*stream],
                    None => (0..plan.streams.len()).collect(),
                };
                // Only work since the stream's last sync: a `sync all` after
                // each of many streams' ops draws one edge each, not all.
                for stream in streams {
                    if let Some(last) = last_on_stream[stream].take() {
                        let _ = writeln!(out, "  op{last} -.->|sync| op{index}");
                    }
                }
            }
            _ => {}
        }
        if let Lane::Stream(stream) = op.lane {
            last_on_stream[stream] = Some(index);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Errors;

    #[test]
    fn a_loop_and_its_sets_are_described_as_written() {
        let input: crate::syntax::Input = syn::parse_str(
            "plan P(n: usize, m: usize, k: usize, r: usize) {
                host a: [f32; k * m] pinned;
                device ring[r]: [f32; m];
                stream up, lanes[r];
                event done[r];
                for c in 0..k {
                    on up { wait done[c % r]; copy a[c * m..(c + 1) * m] -> ring[c % r]; }
                    on lanes[c % r] { copy ring[c % r] -> a[c * m..(c + 1) * m]; record done[c % r]; }
                }
            }",
        )
        .unwrap();
        let errors = Errors::new();
        let plan = crate::ir::build(&input.plans[0], &errors);
        errors.finish().unwrap();
        let summary = summary(&plan);
        for part in [
            "buffers: a: [f32; k * m] pinned, ring[r]: [f32; m] device",
            "streams: up, lanes[r]",
            "events: done[r]",
            "for c in 0..k {",
            "lanes[c % r] copy ring[c % r] -> a[c * m..(c + 1) * m]",
        ] {
            assert!(summary.contains(part), "{part:?} in\n{summary}");
        }
        assert!(mermaid(&plan).contains("[\"stream lanes[c % r]\"]"));
    }
}
