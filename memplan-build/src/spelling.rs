//! Writing, after a source's `#include`, C++ that names what the source
//! declares: kernels for [`crate::probe`], classes for [`crate::layout`].
//!
//! The source's macros are still defined there: `#define Pair Other` at
//! its end would make a measure of `Pair` one of `Other`. So every
//! identifier written after the include is first checked not to be a
//! macro, and what needs no name of the source is defined before it.

use std::fmt::Write as _;

/// Where C++ written after a source finds one of its names, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spelled {
    /// The namespaces to reopen, outermost first, `None` for an anonymous
    /// one: a name in an anonymous namespace is found from inside it,
    /// since from outside, `::k` finds the enclosing namespace's own `k`
    /// first, where there is one. Empty where the name is found from the
    /// top.
    pub scopes: Vec<Option<String>>,
    /// The name as written there: `k` inside its scopes, else qualified
    /// from the top (`a::k`, `t<int>`).
    pub name: String,
}

impl Spelled {
    /// The path of the named scopes, for naming from the top what is
    /// declared inside them: `a::` for `a::(anonymous)`.
    pub fn path(&self) -> String {
        self.scopes
            .iter()
            .flatten()
            .map(|scope| format!("{scope}::"))
            .collect()
    }
}

/// How a qualified name (as demangled: `a::k`, `t<int>`, and
/// `_GLOBAL__N__71a0_8_k_cu_1::k`, nvcc's name for a file's anonymous
/// namespace) is written after its source; `None`
/// for one that has no spelling there (a lambda's, a template's instance
/// in an anonymous namespace).
pub fn spelled(qualified: &str) -> Option<Spelled> {
    if qualified.is_empty() || qualified.contains(['{', '\'', '"']) {
        return None;
    }
    let anonymous = |part: &str| part.starts_with("_GLOBAL__N_");
    let parts: Vec<&str> = qualified.split("::").collect();
    if !parts.iter().any(|part| anonymous(part)) {
        return Some(Spelled {
            scopes: Vec::new(),
            name: qualified.to_owned(),
        });
    }
    // Reopened namespaces cannot write a template's arguments from the
    // top; such a kernel is not probed.
    if qualified.contains('<') {
        return None;
    }
    let (name, scopes) = parts.split_last()?;
    Some(Spelled {
        scopes: scopes
            .iter()
            .map(|part| (!anonymous(part)).then(|| (*part).to_owned()))
            .collect(),
        name: (*name).to_owned(),
    })
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
    fn spells_names_from_the_top_or_from_their_anonymous_namespace() {
        let top = |name: &str| {
            Some(Spelled {
                scopes: Vec::new(),
                name: name.to_owned(),
            })
        };
        assert_eq!(spelled("a::k"), top("a::k"));
        assert_eq!(spelled("ns::sp<ns::S>"), top("ns::sp<ns::S>"));
        let anon = spelled("_GLOBAL__N__71a0d849_8_mixup_cu_466c3b0d::anon").unwrap();
        assert_eq!((anon.scopes, anon.name.as_str()), (vec![None], "anon"));
        let nested = spelled("a::_GLOBAL__N_1::b::k").unwrap();
        assert_eq!(
            nested.scopes,
            [Some("a".to_owned()), None, Some("b".to_owned())]
        );
        assert_eq!(nested.path(), "a::b::");
        assert_eq!(spelled("_GLOBAL__N_1::t<int>"), None);
        assert_eq!(spelled("f()::{lambda()#1}"), None);
        assert_eq!(spelled(""), None);
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
