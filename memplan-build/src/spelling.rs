//! Writing, after a source's `#include`, C++ that names what the source
//! declares: kernels for [`crate::probe`], classes for [`crate::layout`].
//!
//! The source's macros are still defined there: `#define Pair Other` at
//! its end would make a measure of `Pair` one of `Other`. So every
//! identifier written after the include is first checked not to be a
//! macro, and what needs no name of the source is defined before it.

use std::fmt::Write as _;

/// A name as the file's top level can write it: its qualified name
/// (a kernel's `a::k`, `t<int>`, a class's) without anonymous namespaces, whose
/// members the enclosing one finds; `None` for a name that has no
/// spelling (a lambda's).
pub fn spelled(qualified: &str) -> Option<String> {
    const ANONYMOUS: &str = "_GLOBAL__N_";
    let mut name = qualified.replace("(anonymous namespace)::", "");
    while let Some(at) = name.find(ANONYMOUS) {
        // nvcc names each file's own: `_GLOBAL__N__71a0d849_8_mixup_cu_466c3b0d`.
        let end = name[at..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(name.len(), |len| at + len);
        if !name[end..].starts_with("::") {
            return None;
        }
        name.replace_range(at..end + 2, "");
    }
    (!name.is_empty() && !name.contains(['(', '{', '\'', '"'])).then_some(name)
}

/// Preprocessor lines that stop the compile where an identifier of
/// `texts` is a macro, so that what follows them means what it says.
pub fn unexpanded<S: AsRef<str>>(texts: impl IntoIterator<Item = S>) -> String {
    let mut names: Vec<String> = texts
        .into_iter()
        .flat_map(|text| {
            text.as_ref()
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|word| word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut lines = String::new();
    for name in names {
        writeln!(
            lines,
            "#ifdef {name}\n#error \"memplan-build: `{name}` is a macro of the source\"\n#endif"
        )
        .unwrap();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spells_names_from_the_top() {
        assert_eq!(spelled("a::k").as_deref(), Some("a::k"));
        assert_eq!(spelled("ns::sp<ns::S>").as_deref(), Some("ns::sp<ns::S>"));
        assert_eq!(spelled("_GLOBAL__N_1::anon").as_deref(), Some("anon"));
        assert_eq!(
            spelled("a::(anonymous namespace)::k<a::_GLOBAL__N_1::S>").as_deref(),
            Some("a::k<a::S>")
        );
        assert_eq!(
            spelled("_GLOBAL__N__71a0d849_8_mixup_cu_466c3b0d::anon").as_deref(),
            Some("anon")
        );
        assert_eq!(spelled("_GLOBAL__N_1"), None);
        assert_eq!(spelled("f()::{lambda()#1}"), None);
    }

    #[test]
    fn every_identifier_is_checked_once_and_numbers_are_not() {
        let lines = unexpanded(["ns::Pair<ns::S, 4>", "Pair"]);
        assert_eq!(lines.matches("#ifdef").count(), 3, "{lines}");
        assert!(lines.contains("#ifdef ns\n#error"));
        assert!(lines.contains("#ifdef Pair\n"));
        assert!(lines.contains("#ifdef S\n"));
    }
}
