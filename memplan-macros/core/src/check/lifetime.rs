//! Memory lifetimes within one run: device memory is read only after
//! something wrote it; stream-ordered memory is used only between its
//! `alloc` and its `free`, freed once, and freed at all.

use super::line;
use crate::errors::Errors;
use crate::ir::{Access, BufferId, BufferKind, Mode, OpKind, Plan};
use crate::sym::{Atoms, Sym};

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
    let mut written: Vec<(usize, &Access)> = Vec::new();
    for (op, op_accesses) in accesses.iter().enumerate() {
        // A loop's body is one iteration: what it writes is not all the
        // loop writes, so after the loop it covers nothing.
        if let Some(repeat) = plan.loops.iter().find(|l| l.ops.end == op) {
            written.retain(|(writer, _)| !repeat.contains(*writer));
        }
        for access in op_accesses.iter().filter(|a| a.buffer == buffer) {
            let writes: Vec<&Access> = written.iter().map(|(_, access)| *access).collect();
            if access.mode.reads() && !covered(&plan.atoms, &writes, access) {
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
                Mode::Write | Mode::ReadWrite => written.push((op, access)),
                // Uses after a free are `used_while_allocated`'s to report.
                Mode::Free => return,
                Mode::Read | Mode::Alloc => {}
            }
        }
    }
}

/// Whether the union of `written` provably covers what `read` reads, given
/// what the run time guarantees of each range (inside its buffer, no size
/// wrapped). One write holding it all is the common case and is tried
/// first. Otherwise the walk goes from the read's start, keeping
/// `start..point` covered, each step over a write that starts at or before
/// the point and may end after it; each write is stepped over once, so the
/// walk ends.
///
/// Cost: O(W) proofs for a read covered by one of W writes, O(W²) for one
/// covered only by several.
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
    let mut point = read.range.start.clone();
    let mut point_facts: &[Sym] = &[];
    let mut unused: Vec<&Access> = written.to_vec();
    loop {
        if atoms.provably_le(&read.range.end, &point, &[&read.facts, point_facts]) {
            return true;
        }
        // Moving the point to any write's end that starts by it keeps
        // `start..point` covered, even if that end turns out to be below
        // the point.
        let step = unused.iter().position(|w| {
            let facts = [read.facts.as_slice(), point_facts, &w.facts];
            atoms.provably_le(&w.range.start, &point, &facts)
                && !atoms.provably_le(&w.range.end, &point, &facts)
        });
        match step {
            Some(index) => {
                let write = unused.swap_remove(index);
                point = write.range.end.clone();
                point_facts = &write.facts;
            }
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
