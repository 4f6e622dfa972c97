//! Buffers as text, for error messages, reports and diagrams:
//! `[f32; n] pinned(mapped)`. (Ops say themselves: `OpDef::label`.)

use super::BufferKind;
use crate::text::text as tokens;

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
