//! The IR built from small plans.

use super::names::{close, distance};
use super::*;

fn plan(text: &str) -> Plan {
    let input: crate::syntax::Input = syn::parse_str(text).unwrap();
    let errors = Errors::new();
    let plan = build(&input.plans[0], &errors);
    errors.finish().unwrap();
    plan
}

#[test]
fn stream_blocks_flatten_into_program_order() {
    let plan = plan(
        "plan P(n: usize) { device d: [f32; n]; stream s1, s2;
         fill d with 1.0; on s1 { fill d with 2.0; } on s2 { fill d with 3.0; } sync all; }",
    );
    let lanes: Vec<Lane> = plan.ops.iter().map(|op| op.lane).collect();
    assert_eq!(
        lanes,
        [Lane::Host, Lane::Stream(0), Lane::Stream(1), Lane::Host]
    );
    let labels: Vec<&str> = plan.ops.iter().map(|op| op.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "fill d with 1.0",
            "fill d with 2.0",
            "fill d with 3.0",
            "sync all"
        ]
    );
}

#[test]
fn a_freed_name_can_be_allocated_again() {
    let plan = plan(
        "plan P(n: usize) { stream s; on s { alloc t: [f32; n]; free t; alloc t: [u8; 2 * n]; fill t with 0; free t; } }",
    );
    let OpKind::Fill { dst, .. } = &plan.ops[3].kind else {
        panic!("op 3 is the fill")
    };
    assert_eq!(dst.buffer, 1, "the fill uses the second allocation");
    assert!(matches!(
        plan.buffers[1].kind,
        BufferKind::StreamOrdered { alloc: 2 }
    ));
    assert_eq!(text(&plan.buffers[1].elem), "u8");
}

#[test]
fn parameters_become_sizes_values_and_buffers() {
    let plan = plan("plan P(n: usize, scale: f32, xs: &[f32; n], out: &mut [f32] registered) { }");
    assert!(matches!(plan.params[0].kind, ParamKind::Size));
    assert!(matches!(plan.params[1].kind, ParamKind::Value(_)));
    let (ParamKind::Slice(xs), ParamKind::Slice(out)) =
        (&plan.params[2].kind, &plan.params[3].kind)
    else {
        panic!("slices become buffers")
    };
    assert_eq!(
        plan.buffers[*xs].kind,
        BufferKind::Param {
            mutable: false,
            registered: false
        }
    );
    assert_eq!(
        plan.buffers[*out].kind,
        BufferKind::Param {
            mutable: true,
            registered: true
        }
    );
    assert_eq!(
        plan.buffers[*out].len.display(&plan.atoms).to_string(),
        "out.len()"
    );
}

#[test]
fn names_are_close_by_edits() {
    assert_eq!(distance("frames", "frames"), 0);
    assert_eq!(distance("frmes", "frames"), 1);
    assert_eq!(distance("fraems", "frames"), 2);
    assert_eq!(distance("", "abc"), 3);
    assert!(close(1, "frmes", "frames"));
    assert!(close(2, "fraems", "frames"));
    assert!(!close(1, "a", "da"), "a short name is not a misspelling");
    assert!(!close(1, "s3", "s1"));
    assert!(!close(3, "events", "frames"));
}

#[test]
fn host_memory_is_pinned_unless_said_otherwise() {
    let plan =
        plan("plan P(n: usize) { host a: [f32; n], b: [f32; n] pageable, c: [f32; n] mapped; }");
    let kinds: Vec<BufferKind> = plan.buffers.iter().map(|b| b.kind).collect();
    assert!(kinds[0].is_page_locked() && !kinds[0].is_device_reachable());
    assert!(!kinds[1].is_page_locked());
    assert!(kinds[2].is_page_locked() && kinds[2].is_device_reachable());
}
