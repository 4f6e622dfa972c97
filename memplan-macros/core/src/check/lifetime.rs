//! Memory lifetimes within one run: device memory is read only after
//! something wrote it; stream-ordered memory is used only between its
//! `alloc` and its `free`, freed once, and freed at all.

use super::{Facts, line};
use crate::errors::Errors;
use crate::ir::{Access, BufferId, BufferKind, Loop, Mode, OpKind, Plan};
use crate::sym::{Atoms, Sym};
use std::borrow::Cow;

/// A read of device memory that no earlier op wrote (written ranges must
/// cover the read).
pub fn check_written_before_read(facts: &Facts, errors: &Errors) {
    for buffer in 0..facts.plan.buffers.len() {
        initialized_before_read(facts.plan, &facts.accesses, buffer, errors);
    }
}

/// Stream-ordered memory used after its `free`, freed twice, or never
/// freed.
pub fn check_allocation_lifetimes(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for buffer in 0..plan.buffers.len() {
        if let BufferKind::StreamOrdered { alloc } = plan.buffers[buffer].kind {
            used_while_allocated(plan, &facts.accesses, buffer, alloc, errors);
        }
    }
}

/// Every read of device memory is covered by earlier writes (in program
/// order; whether those writes are ordered before the read is the race
/// check's business).
fn initialized_before_read(
    plan: &Plan,
    accesses: &[Vec<Access>],
    buffer: BufferId,
    errors: &Errors,
) {
    if plan.buffers[buffer].kind.starts_initialized() {
        return;
    }
    let mut written: Vec<(usize, Cow<Access>)> = Vec::new();
    // A loop whose writes of the buffer are not all counted after it.
    let mut unnamed_loop_writes: Option<&Loop> = None;
    for (op, op_accesses) in accesses.iter().enumerate() {
        // A loop's body is one iteration: after the loop, what it wrote
        // covers what all the iterations together wrote, where that is a
        // range the checks can name, and nothing otherwise.
        if let Some(repeat) = plan.loops.iter().find(|l| l.ops.end == op) {
            written = written
                .into_iter()
                .filter_map(|(writer, access)| {
                    if !repeat.contains(writer) {
                        return Some((writer, access));
                    }
                    let all = plan.over_every_iteration(repeat, &access);
                    if all.is_none() {
                        unnamed_loop_writes = Some(repeat);
                    }
                    Some((writer, Cow::Owned(all?)))
                })
                .collect();
        }
        for access in op_accesses.iter().filter(|a| a.buffer == buffer) {
            let writes: Vec<&Access> = written.iter().map(|(_, access)| access.as_ref()).collect();
            if access.mode.reads() && !covered(&plan.atoms, &writes, access) {
                let name = &plan.buffers[buffer].name;
                let help = match &plan.ops[op].kind {
                    OpKind::Launch(_) => format!(
                        "write `{name}` first (a copy, a fill or another kernel); if this kernel only writes it, \
                         declare the parameter `&out [T]`"
                    ),
                    _ => format!("write `{name}` first, with a copy, a fill or a kernel"),
                };
                let help = match unnamed_loop_writes {
                    Some(repeat) => {
                        let c = &repeat.var;
                        format!(
                            "{help}; what the loop on line {} writes counts after it only as ranges \
                             `s({c})..s({c} + 1)`, which together are `s(0)..s(k)`, and as ranges without `{c}` \
                             where the loop always runs (`0..k + 1`)",
                            line(repeat.span)
                        )
                    }
                    None => help,
                };
                errors.at(
                    access.span,
                    format!(
                        "`{}` reads `{name}` at {}, and memplan cannot find earlier operations that write all of that",
                        plan.ops[op].label,
                        access.shown(&plan.atoms)
                    ),
                    help,
                );
            }
            match access.mode {
                Mode::Write | Mode::ReadWrite | Mode::Atomic => {
                    written.push((op, Cow::Borrowed(access)))
                }
                // Uses after a free are `used_while_allocated`'s to report.
                Mode::Free => return,
                Mode::Read | Mode::Alloc => {}
            }
        }
    }
}

/// The most points [`covered`] keeps.
const MAX_POINTS: usize = 4;

/// Whether the union of `written` provably covers what `read` reads, given
/// what the run time guarantees of each range (inside its buffer, no size
/// wrapped). One write holding it all is the common case and is tried
/// first. Otherwise the walk goes from the read's start, keeping
/// `start..max(points)` covered, each step over a write that starts at or
/// before that maximum and may end after it, adding its end to the points.
/// The maximum is never named, only compared with (`x <= max(points)`:
/// no size puts `x` above every point), so what is covered up to one
/// point for some sizes and up to another for the rest still counts.
/// Sizes for which the read is empty, or ends by the points, have it
/// covered already, so each proof may take it as neither. A point that a
/// later one provably passes is dropped, with its write's facts, and
/// past [`MAX_POINTS`] the oldest. Each write is stepped over once, so
/// the walk ends.
///
/// Cost: O(W) proofs for a read covered by one of W writes, O(W²) for one
/// covered only by several, each with the facts of the points kept (one
/// or two where writes follow each other).
fn covered(atoms: &Atoms, written: &[&Access], read: &Access) -> bool {
    if atoms.is_empty(&read.range, &[&read.facts]) {
        return true;
    }
    if written
        .iter()
        .any(|w| atoms.contains(&w.range, &read.range, &[&read.facts, &w.facts]))
    {
        return true;
    }
    // Each point with what its write guarantees (the read's start: none).
    let mut points: Vec<(&Sym, &[Sym])> = vec![(&read.range.start, &[])];
    let mut unused: Vec<&Access> = written.to_vec();
    loop {
        let ends: Vec<&Sym> = points.iter().map(|(point, _)| *point).collect();
        let mut facts: Vec<&[Sym]> = vec![&read.facts];
        facts.extend(points.iter().map(|(_, facts)| *facts));
        if atoms.provably_le_max(&read.range.end, &ends, &facts) {
            return true;
        }
        // Where the read ends by the points (or is empty: its start is
        // one), it is covered: a step may take it as ending after each,
        // `point + 1 <= end`.
        let uncovered: Vec<Sym> = ends
            .iter()
            .filter_map(|point| point.add(&Sym::constant(1))?.sub(&read.range.end))
            .collect();
        facts.push(&uncovered);
        let step = unused.iter().position(|w| {
            facts.push(&w.facts);
            let steps = atoms.provably_le_max(&w.range.start, &ends, &facts)
                && !atoms.provably_le_max(&w.range.end, &ends, &facts);
            facts.pop();
            steps
        });
        let Some(index) = step else {
            return false;
        };
        let write = unused.swap_remove(index);
        // Points the new end passes for every size name no more: keep the
        // few that may be the maximum, as proofs grow with them. For
        // every size, not only where the read is still uncovered: where
        // it is covered, the dropped point may be what covers it.
        facts.pop();
        facts.push(&write.facts);
        let end = &write.range.end;
        points.retain(|(point, _)| !atoms.provably_le(point, end, &facts));
        // Points no end passes for every size (`min(i * m, b)` of many
        // `i`) would each stay, and every proof carry them all: keep the
        // newest few. Dropping one is sound, as what the rest reach is
        // still covered; it can only fail a proof.
        if points.len() >= MAX_POINTS {
            points.remove(0);
        }
        points.push((end, &write.facts));
    }
}

fn used_while_allocated(
    plan: &Plan,
    accesses: &[Vec<Access>],
    buffer: BufferId,
    alloc: usize,
    errors: &Errors,
) {
    let name = &plan.buffers[buffer].name;
    let mut freed_at: Option<usize> = None;
    for (op, op_accesses) in accesses.iter().enumerate().skip(alloc + 1) {
        for access in op_accesses.iter().filter(|a| a.buffer == buffer) {
            match (access.mode, freed_at) {
                (Mode::Free, Some(first)) => errors.at(
                    plan.ops[op].span,
                    format!("`{name}` is freed twice; the first `free {name}` is on line {}", line(plan.ops[first].span)),
                    "free it once, after its last use",
                ),
                (Mode::Free, None) => freed_at = Some(op),
                (_, Some(free)) => errors.at(
                    access.span,
                    format!(
                        "`{}` uses `{name}` after `free {name}` (line {})",
                        plan.ops[op].label,
                        line(plan.ops[free].span)
                    ),
                    format!("move `free {name}` after this, or allocate it again first with `alloc {name}: [T; len];`"),
                ),
                (_, None) => {}
            }
        }
    }
    if freed_at.is_none() {
        errors.at(
            name.span(),
            format!("`{name}` is allocated on every run and never freed, so each run leaks it"),
            format!(
                "free it after its last use, `free {name};` in a stream block ordered after that use"
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::{SymRange, read};

    fn access(start: &str, end: &str, atoms: &mut Atoms) -> Access {
        let mut facts = Vec::new();
        let mut sym = |text: &str, atoms: &mut Atoms| {
            let reading = read(&syn::parse_str(text).unwrap(), atoms).unwrap();
            facts.extend(reading.facts);
            reading.value
        };
        let range = SymRange {
            start: sym(start, atoms),
            end: sym(end, atoms),
        };
        let n = sym("n", atoms);
        facts.extend(range.start.sub(&range.end));
        facts.extend(range.end.sub(&n));
        Access {
            buffer: 0,
            range,
            facts,
            mode: Mode::Write,
            written: None,
            span: proc_macro2::Span::call_site(),
        }
    }

    #[test]
    fn halves_cover_the_whole() {
        let mut atoms = Atoms::default();
        atoms.intern_size("n");
        let second = access("n / 2", "n", &mut atoms);
        let first = access("0", "n / 2", &mut atoms);
        let all = access("0", "n", &mut atoms);
        assert!(covered(&atoms, &[&second, &first], &all));
        assert!(!covered(&atoms, &[&second], &all));
        let inside = access("1", "n / 2", &mut atoms);
        assert!(covered(&atoms, &[&first], &inside));
        let nothing = access("4", "4", &mut atoms);
        assert!(covered(&atoms, &[], &nothing));
    }

    #[test]
    fn coverage_that_changes_hands_with_the_sizes() {
        let mut atoms = Atoms::default();
        for size in ["n", "k", "m"] {
            atoms.intern_size(size);
        }
        let mut case = |writes: &[(&str, &str)], read: (&str, &str)| {
            let writes: Vec<Access> = writes
                .iter()
                .map(|(start, end)| access(start, end, &mut atoms))
                .collect();
            let read = access(read.0, read.1, &mut atoms);
            covered(&atoms, &writes.iter().collect::<Vec<_>>(), &read)
        };
        // Up to `1` for `m = 0`, up to `k * m + 2 * m` otherwise: the
        // larger of two points.
        assert!(case(
            &[("0", "1"), ("0", "k * m + 2 * m")],
            ("0", "k * m + 1")
        ));
        // Empty for `m = 0`, inside the write otherwise.
        assert!(case(&[("1", "k * m + m + 1")], ("m", "k * m + m")));
        // `0..2 * m` covers it unless `m = 0`, and then the other write
        // starts at 0.
        assert!(case(&[("0", "2 * m"), ("k * m", "k * m + 1")], ("0", "1")));
        // A gap stays a gap.
        assert!(!case(&[("0", "m"), ("2 * m", "3 * m")], ("0", "3 * m")));
    }

    #[test]
    fn partial_reads_of_a_whole_write_are_covered() {
        let mut atoms = Atoms::default();
        atoms.intern_size("n");
        let all = access("0", "n", &mut atoms);
        for (start, end) in [
            ("0", "1"),
            ("n - 1", "n"),
            ("0", "n / 2 + 1"),
            ("n / 2", "n / 2 + 1"),
        ] {
            let read = access(start, end, &mut atoms);
            assert!(covered(&atoms, &[&all], &read), "{start}..{end}");
        }
        let first = access("0", "n / 2", &mut atoms);
        let past_half = access("0", "n / 2 + 1", &mut atoms);
        assert!(
            !covered(&atoms, &[&first], &past_half),
            "one element past the write"
        );
    }
}
