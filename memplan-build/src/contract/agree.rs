//! That every compilation of a source reads the same contracts.
//!
//! The contracts are read from the host's compilation, where
//! `__CUDA_ARCH__` is not defined; each GPU architecture's compilation
//! preprocesses the source again with it defined, and a macro in an
//! extent (`MEMPLAN_WRITES(TILE * n)`, `TILE` 64 on the host and 128 for
//! sm_90) would then state one thing and compile another. So each
//! compilation's preprocessed source is compared with the host's: every
//! parameter list with a contract in it, with the name before it, must be
//! the same text in all of them.

use super::scan::{literal_end, matching};

/// Every parameter list of `preprocessed` (a source after the
/// preprocessor) that holds a contract, with the name before it and
/// runs of spaces made one: what must be the same in every compilation.
/// An error where the lexing lost a contract: every `"memplan:"` of the
/// text must be one it read as a contract, or the comparison would be
/// blind to it.
pub fn annotated(preprocessed: &str) -> Result<Vec<String>, String> {
    const MARKER: &str = "\"memplan:\"";
    let code = without_line_markers(preprocessed);
    let bytes = code.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    let mut lists: Vec<usize> = Vec::new();
    let mut markers = 0;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\'' if in_number(bytes, at) => {}
            b'"' if let Some(end) = raw_string_end(bytes, at) => {
                at = end;
                continue;
            }
            b'"' | b'\'' => {
                // `name(__attribute__((annotate("memplan:" ...`: the list
                // is the fourth parenthesis out.
                if code[at..].starts_with(MARKER) {
                    markers += 1;
                    if let Some(&list) = open.len().checked_sub(4).map(|i| &open[i])
                        && !lists.contains(&list)
                    {
                        lists.push(list);
                    }
                }
                at = literal_end(bytes, at);
                continue;
            }
            b'(' => open.push(at),
            b')' => {
                open.pop();
            }
            _ => {}
        }
        at += 1;
    }
    if markers != code.matches(MARKER).count() {
        return Err(
            "memplan could not read every contract of the source as it compares them \
             between compilations (a literal it cannot lex before one?)"
                .to_owned(),
        );
    }
    Ok(lists
        .into_iter()
        .map(|list| {
            let close = matching(&code, list).unwrap_or(code.len() - 1);
            let name_start = code[..list]
                .trim_end()
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(0, |i| i + 1);
            let text = &code[name_start..=close];
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect())
}

/// Whether the `'` at `at` is a digit separator (`1'000`): inside a
/// number, whose token starts with a digit (or `.` and a digit), rather
/// than after a character literal's prefix (`L'x'`, `u8'x'`).
fn in_number(bytes: &[u8], at: usize) -> bool {
    let token = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'\'';
    let mut start = at;
    while start > 0 && token(bytes[start - 1]) {
        start -= 1;
    }
    match bytes.get(start) {
        Some(b) if b.is_ascii_digit() => start < at,
        Some(b'.') => bytes.get(start + 1).is_some_and(u8::is_ascii_digit),
        _ => false,
    }
}

/// Where the raw string literal whose `"` is at `at` ends (`R"d(...)d"`,
/// prefixed `R`, `u8R`, `uR`, `UR` or `LR`); `None` for any other `"`.
fn raw_string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut start = at;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    if !matches!(&bytes[start..at], b"R" | b"u8R" | b"uR" | b"UR" | b"LR") {
        return None;
    }
    let open = at + 1 + bytes[at + 1..].iter().position(|&b| b == b'(')?;
    let delimiter = &bytes[at + 1..open];
    let mut closing = Vec::with_capacity(delimiter.len() + 2);
    closing.push(b')');
    closing.extend_from_slice(delimiter);
    closing.push(b'"');
    let end = bytes[open..]
        .windows(closing.len())
        .position(|window| window == closing.as_slice())?;
    Some(open + end + closing.len())
}

/// `Ok` if `other`'s contracts (compiled `for_what`) read as the host's,
/// else the build's error naming the first that differs.
pub fn same(host: &[String], other: &[String], for_what: &str) -> Result<(), String> {
    let differs = host
        .iter()
        .zip(other)
        .find(|(host, other)| host != other)
        .map(|(host, other)| (host.as_str(), other.as_str()))
        .or_else(|| match host.len().cmp(&other.len()) {
            std::cmp::Ordering::Less => Some(("(nothing)", &other[host.len()])),
            std::cmp::Ordering::Greater => Some((&host[other.len()], "(nothing)")),
            std::cmp::Ordering::Equal => None,
        });
    match differs {
        None => Ok(()),
        Some((host, other)) => Err(format!(
            "a contract reads differently when compiled {for_what} than for the host, where \
             memplan reads it: `{host}` there is `{other}` here\n\
             help: a contract must mean the same in every compilation of the kernel; write its \
             extent with macros that do not depend on `__CUDA_ARCH__`"
        )),
    }
}

/// The code without the preprocessor's `# 1 "file"` lines.
fn without_line_markers(code: &str) -> String {
    code.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As nvcc 13.0's preprocessor writes a kernel with a contract whose
    /// extent names `TILE`.
    fn source(tile: u32) -> String {
        format!(
            "# 9 \"t.cu\"\nextern \"C\" __attribute__((global)) void tiled(__attribute__((annotate(\"memplan:\" \"writes\" \":\" \"{tile} * n\"))) float *out,\n   int n) {{}}\n"
        )
    }

    #[test]
    fn finds_each_list_with_a_contract_and_its_name() {
        assert_eq!(
            annotated(&source(64)).unwrap(),
            [
                "tiled(__attribute__((annotate(\"memplan:\" \"writes\" \":\" \"64 * n\"))) float *out, int n)"
            ]
        );
        assert!(
            annotated("void plain(float *p, int n) {}")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_contract_that_differs_by_architecture_is_refused() {
        let read = |tile| annotated(&source(tile)).unwrap();
        let host = read(64);
        assert_eq!(same(&host, &read(64), "for compute_90"), Ok(()));
        let error = same(&host, &read(128), "for compute_90").unwrap_err();
        assert!(error.contains("compiled for compute_90"), "{error}");
        assert!(error.contains("\"128 * n\""), "{error}");
        assert!(same(&host, &[], "for compute_80").is_err());
    }

    #[test]
    fn separators_and_raw_strings_are_not_literals_that_hide_a_contract() {
        let text = format!(
            "constexpr int a = 1'000; constexpr auto b = 0x1'0; const char *c = R\"x(\" ')x\"; \
             char d = L'x'; char e = u8'y';\n{}",
            source(64)
        );
        assert_eq!(annotated(&text).unwrap().len(), 1);
        assert!(in_number(b"1'000", 1));
        assert!(!in_number(b"L'x'", 1));
        assert_eq!(raw_string_end(b"R\"d(a)\"b)d\"", 1), Some(11));
        assert_eq!(raw_string_end(b"x\"", 1), None);
    }

    #[test]
    fn a_contract_the_lexing_lost_is_an_error() {
        // An unclosed character literal swallows the rest.
        let text = format!("char c = '\\\"; {}", source(64));
        assert!(annotated(&text).is_err());
    }
}
