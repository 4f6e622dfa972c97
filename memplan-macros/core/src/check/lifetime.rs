//! Memory lifetimes within one run: device memory is read only after
//! something wrote it; stream-ordered memory is used only between its
//! `alloc` and its `free`, freed once, and freed at all.

use super::line;
use crate::errors::Errors;
use crate::ir::{Access, BufferId, BufferKind, Mode, OpKind, Plan};
use crate::sym::{Atoms, SymRange};

pub fn check(plan: &Plan, accesses: &[Vec<Access>], errors: &Errors) {
    for buffer in 0..plan.buffers.len() {
        initialized_before_read(plan, accesses, buffer, errors);
        if let BufferKind::StreamOrdered { alloc } = plan.buffers[buffer].kind {
            used_while_allocated(plan, accesses, buffer, alloc, errors);
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
    let mut written: Vec<SymRange> = Vec::new();
    for (op, op_accesses) in accesses.iter().enumerate() {
        for access in op_accesses.iter().filter(|a| a.buffer == buffer) {
            if access.mode.reads() && !covered(&plan.atoms, &written, &access.range) {
                let name = &plan.buffers[buffer].name;
                let help = match &plan.ops[op].kind {
                    OpKind::Launch(_) => format!(
                        "write `{name}` first (a copy, a fill or another kernel); if this kernel only writes it, \
                         declare the parameter `&out [T]`"
                    ),
                    _ => format!("write `{name}` first, with a copy, a fill or a kernel"),
                };
                errors.at(
                    access.span,
                    format!(
                        "`{}` reads `{name}` at {}, and memplan cannot find earlier operations that write all of that",
                        plan.ops[op].label,
                        access.range.display(&plan.atoms)
                    ),
                    help,
                );
            }
            match access.mode {
                Mode::Write | Mode::ReadWrite => written.push(access.range.clone()),
                // Uses after a free are `used_while_allocated`'s to report.
                Mode::Free => return,
                Mode::Read | Mode::Alloc => {}
            }
        }
    }
}

/// Whether the union of `written` provably covers `range`: walks from the
/// range's start, keeping `start..point` covered, each step over a write that
/// starts at or before the point and may end after it. A write that reaches
/// the end finishes the walk; each write is stepped over once, so the walk
/// ends.
fn covered(atoms: &Atoms, written: &[SymRange], range: &SymRange) -> bool {
    if atoms.is_empty(range) {
        return true;
    }
    let mut point = range.start.clone();
    let mut unused: Vec<&SymRange> = written.iter().collect();
    loop {
        if atoms.provably_le(&range.end, &point) {
            return true;
        }
        let starts_by_point = |w: &&&SymRange| atoms.provably_le(&w.start, &point);
        if unused
            .iter()
            .filter(starts_by_point)
            .any(|w| atoms.provably_le(&range.end, &w.end))
        {
            return true;
        }
        // Moving the point to any covering write's end keeps `start..point`
        // covered, even if that end turns out to be below the point.
        let step = unused
            .iter()
            .position(|w| starts_by_point(&w) && !atoms.provably_le(&w.end, &point));
        match step {
            Some(index) => point = unused.swap_remove(index).end.clone(),
            None => return false,
        }
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
                "add `free {name};` after its last use, in a stream block ordered after that use"
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::{Sym, from_expr};

    fn range(start: &str, end: &str, atoms: &mut Atoms) -> SymRange {
        let sym = |text: &str, atoms: &mut Atoms| {
            from_expr(&syn::parse_str(text).unwrap(), atoms).unwrap()
        };
        SymRange {
            start: sym(start, atoms),
            end: sym(end, atoms),
        }
    }

    #[test]
    fn halves_cover_the_whole() {
        let mut atoms = Atoms::default();
        let written = [
            range("n / 2", "n", &mut atoms),
            range("0", "n / 2", &mut atoms),
        ];
        let all = range("0", "n", &mut atoms);
        assert!(covered(&atoms, &written, &all));
        assert!(!covered(&atoms, &written[..1], &all));
        let inside = range("1", "n / 2", &mut atoms);
        assert!(covered(&atoms, &written[1..], &inside));
        assert!(covered(
            &atoms,
            &[],
            &SymRange {
                start: Sym::constant(4),
                end: Sym::constant(4)
            }
        ));
    }
}
