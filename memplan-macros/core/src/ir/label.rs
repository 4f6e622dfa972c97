//! Ops and buffers as text, for error messages, reports and diagrams:
//! `copy a[0..n/2] -> da`, `[f32; n] pinned(mapped)`.

use super::BufferKind;
use crate::syntax::{OpDef, Place, SliceAccess};
use crate::text::text as tokens;

/// The op as a person would write it.
pub fn op_label(op: &OpDef) -> String {
    match op {
        OpDef::Copy { src, dst, .. } => format!("copy {} -> {}", place(src), place(dst)),
        OpDef::Fill { dst, value, .. } => format!("fill {} with {}", place(dst), tokens(value)),
        OpDef::Launch(launch) => format!("launch {}", launch.kernel),
        OpDef::Record { event, index, .. } => format!("record {event}{}", indexed(index)),
        OpDef::Wait { event, index, .. } => format!("wait {event}{}", indexed(index)),
        OpDef::Sync {
            stream: Some(stream),
            ..
        } => format!("sync {stream}"),
        OpDef::Sync { stream: None, .. } => "sync all".to_owned(),
        OpDef::Alloc { buffer, .. } => format!("alloc {}", buffer.name),
        OpDef::Free { buffer, .. } => format!("free {buffer}"),
        OpDef::Host(step) => {
            let params: Vec<String> = step
                .params
                .iter()
                .map(|p| {
                    let access = match p.access {
                        SliceAccess::Read => "",
                        SliceAccess::ReadWrite => "mut ",
                        SliceAccess::Write => "out ",
                    };
                    format!("&{access}{}", p.name)
                })
                .collect();
            format!("host({})", params.join(", "))
        }
        OpDef::Collective(c) => {
            let reduce = c
                .reduce
                .as_ref()
                .map(|op| format!(" {op}"))
                .unwrap_or_default();
            let second = c
                .second
                .as_ref()
                .map(|p| format!(" -> {}", place(p)))
                .unwrap_or_default();
            let rank = match (&c.rank, c.word) {
                (Some(rank), crate::syntax::CollectiveWord::Send) => {
                    format!(" to {}", tokens(rank))
                }
                (Some(rank), _) => format!(" from {}", tokens(rank)),
                (None, _) => String::new(),
            };
            format!(
                "{}{reduce} {}{second}{rank}",
                c.word.text(),
                place(&c.first)
            )
        }
    }
}

pub fn place(place: &Place) -> String {
    let name = format!("{}{}", place.name, indexed(&place.index));
    match (&place.range, &place.named) {
        (Some(range), _) => format!("{name}[{}]", tokens(range)),
        (None, Some(named)) => format!("{name}[{named}]"),
        (None, None) => name,
    }
}

/// `[c % r]` of an element of a set, or nothing.
pub fn indexed(index: &Option<syn::Expr>) -> String {
    index
        .as_ref()
        .map(|index| format!("[{}]", tokens(index)))
        .unwrap_or_default()
}

/// A buffer's type as declared: `[f32; n] pinned(mapped)`, `&mut [f32; n]`.
pub fn declared(elem: &syn::Type, len: Option<&syn::Expr>, kind: BufferKind) -> String {
    let elem = tokens(elem);
    let len = len.map_or_else(|| "..".to_owned(), tokens);
    let kind = match kind {
        BufferKind::Host(kind) if kind.pageable => "pageable".to_owned(),
        BufferKind::Host(kind) => {
            let flags: Vec<&str> = [
                (kind.mapped, "mapped"),
                (kind.write_combined, "write_combined"),
                (kind.portable, "portable"),
            ]
            .into_iter()
            .filter_map(|(set, name)| set.then_some(name))
            .collect();
            if flags.is_empty() {
                "pinned".to_owned()
            } else {
                format!("pinned({})", flags.join(", "))
            }
        }
        BufferKind::Param {
            mutable,
            registered,
        } => {
            let borrow = if mutable { "&mut " } else { "&" };
            let registered = if registered { " registered" } else { "" };
            return format!("{borrow}[{elem}; {len}]{registered}");
        }
        BufferKind::Device => "device".to_owned(),
        BufferKind::StreamOrdered { .. } => "stream-ordered".to_owned(),
    };
    format!("[{elem}; {len}] {kind}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_as_written() {
        let op: OpDef = syn::parse_str("copy a[0 .. n / 2] -> da[n/2..];").unwrap();
        assert_eq!(op_label(&op), "copy a[0..n / 2] -> da[n / 2..]");
        let op: OpDef = syn::parse_str("host(&a, &mut b, &out c) { }").unwrap();
        assert_eq!(op_label(&op), "host(&a, &mut b, &out c)");
        let op: OpDef = syn::parse_str("fill d with f(1, 2);").unwrap();
        assert_eq!(op_label(&op), "fill d with f(1, 2)");
        let op: OpDef = syn::parse_str("fill d[0..n / (2 * m)] with g(1);").unwrap();
        assert_eq!(op_label(&op), "fill d[0..n / (2 * m)] with g(1)");
        let op: OpDef = syn::parse_str("all_reduce sum part[i];").unwrap();
        assert_eq!(op_label(&op), "all_reduce sum part[i]");
        let op: OpDef = syn::parse_str("send a[i][0..n] to (i + 1) % g;").unwrap();
        assert_eq!(op_label(&op), "send a[i][0..n] to (i + 1) % g");
        let op: OpDef = syn::parse_str("broadcast a[i] -> b[i] from 0;").unwrap();
        assert_eq!(op_label(&op), "broadcast a[i] -> b[i] from 0");
        let op: OpDef = syn::parse_str("copy a[1 ..= 2] -> b[..= n];").unwrap();
        assert_eq!(op_label(&op), "copy a[1..=2] -> b[..=n]");
    }
}
