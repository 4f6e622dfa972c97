//! That every compilation of a source reads the same contracts.
//!
//! The contracts are read from the host's compilation, where
//! `__CUDA_ARCH__` is not defined; each GPU architecture's compilation
//! preprocesses the source again with it defined, and a macro in an
//! extent (`MEMPLAN_WRITES(TILE * n)`, `TILE` 64 on the host and 128 for
//! sm_90) would then state one thing and compile another. So each
//! compilation's preprocessed source is compared with the host's: every
//! declaration with a contract in it, from its template head to the end
//! of its parameters, in its namespaces, must be the same text in all of
//! them.

use super::scan::{literal_end, matching, name_before};

/// Every declaration of `preprocessed` (a source after the preprocessor)
/// with a contract in its parameters, from the start of its statement to
/// the end of its parameters, after the namespaces it is in, runs of
/// spaces made one: what must be the same in every compilation. An error
/// where the lexing lost a contract: every `"memplan:` of the text must
/// start a literal it read, or the comparison would be blind to it.
pub fn annotated(preprocessed: &str) -> Result<Vec<String>, String> {
    const MARKER: &str = "\"memplan:";
    let code = blank_line_markers(preprocessed);
    let bytes = code.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    // What each `{` opened: a namespace's name, or nothing.
    let mut scopes: Vec<Option<String>> = Vec::new();
    let mut statement = 0;
    let mut lists: Vec<(usize, usize, String)> = Vec::new();
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
                if code[at..].starts_with(MARKER) {
                    markers += 1;
                    if let Some(list) = parameter_list(&code, &open)
                        && !lists.iter().any(|(known, ..)| *known == list)
                    {
                        lists.push((list, statement, path(&scopes)));
                    }
                }
                at = literal_end(bytes, at);
                continue;
            }
            b'(' => open.push(at),
            b')' => {
                open.pop();
            }
            b'{' if open.is_empty() => {
                scopes.push(namespace_opened(code[statement..at].trim()));
                statement = at + 1;
            }
            b'}' if open.is_empty() => {
                scopes.pop();
                statement = at + 1;
            }
            b';' if open.is_empty() => statement = at + 1,
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
    let mut compared: Vec<String> = lists
        .iter()
        .map(|&(list, statement, ref namespaces)| {
            let close = matching(&code, list).unwrap_or(code.len() - 1);
            let text = &code[statement.min(list)..=close];
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("{namespaces}: {text}")
        })
        .collect();
    // And every declaration of those names at namespace scope, contract or
    // not: a specialization, an overload or a prototype that only some
    // compilation sees changes which entity a kernel is.
    // The name before the parameters, past attributes and template
    // arguments (`t [[gnu::noinline]] (`, `sc<int>(`), without namespaces.
    let names: Vec<String> = lists
        .iter()
        .filter_map(|&(list, ..)| {
            let (name, _) = name_before(&code[..list])?;
            let name = name.split('<').next().unwrap_or(&name);
            Some(name.rsplit("::").next().unwrap_or(name).to_owned())
        })
        .collect();
    if names.len() != lists.len() {
        return Err(
            "memplan could not read the name of every declaration with a contract, as it \
             compares them between compilations"
                .to_owned(),
        );
    }
    for (namespaces, text) in namespace_statements(&code) {
        if tokens(&text)
            .iter()
            .any(|token| names.iter().any(|name| name == token))
        {
            compared.push(format!("{namespaces}; {text}"));
        }
    }
    Ok(compared)
}

/// Every statement at namespace scope (outside any body), to its `;` or
/// the `{` of its body, after the namespaces it is in, runs of spaces
/// made one.
fn namespace_statements(code: &str) -> Vec<(String, String)> {
    let bytes = code.as_bytes();
    let mut scopes: Vec<Option<String>> = Vec::new();
    let mut parens = 0usize;
    let mut statement = 0;
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\'' if in_number(bytes, at) => {}
            b'"' | b'\'' => {
                at = raw_string_end(bytes, at).unwrap_or_else(|| literal_end(bytes, at));
                continue;
            }
            b'(' => parens += 1,
            b')' => parens = parens.saturating_sub(1),
            b'{' | b';' | b'}' if parens == 0 => {
                let at_namespace_scope = scopes.iter().all(Option::is_some);
                let text = code[statement..at]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                if at_namespace_scope && bytes[at] != b'}' && !text.is_empty() {
                    found.push((path(&scopes), text.clone()));
                }
                match bytes[at] {
                    b'{' => scopes.push(namespace_opened(&text)),
                    b'}' => {
                        scopes.pop();
                    }
                    _ => {}
                }
                statement = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    found
}

/// The names an explicit specialization names in `preprocessed` (a source
/// after the preprocessor): the last name before template arguments in a
/// statement that starts `template < >`, however it is spaced, whatever
/// attributes come between.
pub fn specialized(preprocessed: &str) -> Vec<String> {
    let code = blank_line_markers(preprocessed);
    let tokens = tokens(&code);
    let mut names = Vec::new();
    let mut at = 0;
    while at + 2 < tokens.len() {
        if tokens[at] != "template" || tokens[at + 1] != "<" || tokens[at + 2] != ">" {
            at += 1;
            continue;
        }
        // Up to the parameters: the name is the last identifier before
        // the first `<` at the outermost level; attributes are skipped.
        let mut last: Option<&str> = None;
        let mut index = at + 3;
        while index < tokens.len() {
            match tokens[index] {
                "(" if last.is_some_and(|w| {
                    matches!(
                        w,
                        "__attribute__" | "__attribute" | "__declspec" | "alignas"
                    )
                }) =>
                {
                    index = skip_group(&tokens, index, "(", ")");
                    last = None;
                    continue;
                }
                "[" if tokens.get(index + 1) == Some(&"[") => {
                    index = skip_group(&tokens, index, "[", "]");
                    continue;
                }
                "(" | "[" | ";" | "{" => break,
                "<" if last.is_some() => {
                    names.extend(last.map(str::to_owned));
                    break;
                }
                word if word
                    .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$') =>
                {
                    last = Some(word)
                }
                _ => {}
            }
            index += 1;
        }
        at += 3;
    }
    names.sort();
    names.dedup();
    names
}

/// The position after the group of `tokens` that opens at `open` with
/// `left` and closes with `right`.
fn skip_group(tokens: &[&str], open: usize, left: &str, right: &str) -> usize {
    let mut depth = 0usize;
    for (index, token) in tokens.iter().enumerate().skip(open) {
        if *token == left {
            depth += 1;
        } else if *token == right {
            depth -= 1;
            if depth == 0 {
                return index + 1;
            }
        }
    }
    tokens.len()
}

/// The tokens of `code`: identifiers and numbers whole, literals as `"`,
/// every other character alone; spaces dropped.
fn tokens(code: &str) -> Vec<&str> {
    let bytes = code.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_whitespace() {
            at += 1;
        } else if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' {
            let start = at;
            while at < bytes.len()
                && (bytes[at].is_ascii_alphanumeric()
                    || bytes[at] == b'_'
                    || bytes[at] == b'$'
                    || bytes[at] == b'.'
                    || (bytes[at] == b'\'' && in_number(bytes, at)))
            {
                at += 1;
            }
            tokens.push(&code[start..at]);
        } else if byte == b'"' || byte == b'\'' {
            at = raw_string_end(bytes, at).unwrap_or_else(|| literal_end(bytes, at));
            tokens.push("\"");
        } else {
            let len = code[at..].chars().next().map_or(1, char::len_utf8);
            tokens.push(&code[at..at + len]);
            at += len;
        }
    }
    tokens
}

/// The parameter list a contract's literal is in: the innermost open
/// parenthesis that is not an attribute's (`__attribute__((annotate(`).
fn parameter_list(code: &str, open: &[usize]) -> Option<usize> {
    open.iter().rev().copied().find(|&paren| {
        let before = code[..paren].trim_end();
        let word_start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let word = &before[word_start..];
        !before.ends_with('(') && !matches!(word, "annotate" | "__attribute__" | "__attribute")
    })
}

/// The namespaces `scopes` are in (`a::b`), from what each open `{`
/// opened.
fn path(scopes: &[Option<String>]) -> String {
    let names: Vec<&str> = scopes
        .iter()
        .flatten()
        .filter(|name| !name.is_empty())
        .map(String::as_str)
        .collect();
    names.join("::")
}

/// The namespace a `{` after `head` opens, if it opens one; a linkage
/// block (`extern "C++" {`) is namespace scope too, and adds no name.
fn namespace_opened(head: &str) -> Option<String> {
    if let Some(linkage) = head.strip_prefix("extern")
        && linkage.trim().starts_with('"')
        && linkage.trim().ends_with('"')
    {
        return Some(String::new());
    }
    let head = head.strip_prefix("inline ").unwrap_or(head);
    let rest = head.strip_prefix("namespace")?;
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    Some(if name.is_empty() {
        "(anonymous)".to_owned()
    } else {
        name
    })
}

/// The code with the preprocessor's `# 1 "file"` lines blanked (their
/// bytes made spaces, so that positions stay), outside literals only: a
/// raw string may hold a line that starts with `#`.
fn blank_line_markers(code: &str) -> String {
    let mut bytes = code.as_bytes().to_vec();
    let mut line_start = true;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => line_start = true,
            b' ' | b'\t' => {}
            b'#' if line_start => {
                while at < bytes.len() && bytes[at] != b'\n' {
                    bytes[at] = b' ';
                    at += 1;
                }
                continue;
            }
            b'\'' if in_number(&bytes, at) => line_start = false,
            b'"' | b'\'' => {
                let end = raw_string_end(&bytes, at).unwrap_or_else(|| literal_end(&bytes, at));
                at = end;
                line_start = false;
                continue;
            }
            _ => line_start = false,
        }
        at += 1;
    }
    String::from_utf8(bytes).unwrap_or_default()
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
    fn finds_each_list_with_a_contract_and_every_declaration_of_its_name() {
        let found = annotated(&source(64)).unwrap();
        let declaration = "extern \"C\" __attribute__((global)) void tiled(__attribute__((annotate(\"memplan:\" \"writes\" \":\" \"64 * n\"))) float *out, int n)";
        assert_eq!(
            found,
            [format!(": {declaration}"), format!("; {declaration}")]
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
        assert_eq!(annotated(&text).unwrap().len(), 2);
        assert!(in_number(b"1'000", 1));
        assert!(!in_number(b"L'x'", 1));
        assert_eq!(raw_string_end(b"R\"d(a)\"b)d\"", 1), Some(11));
        assert_eq!(raw_string_end(b"x\"", 1), None);
    }

    #[test]
    fn namespaces_template_arguments_and_hand_written_markers_are_compared() {
        let special = |ty: &str| {
            format!(
                "namespace ns {{\ntemplate <> __attribute__((global)) void k<{ty}>(__attribute__((annotate(\"memplan:writes:n\"))) {ty} *p, int n) {{}}\n}}\n"
            )
        };
        let host = annotated(&special("float")).unwrap();
        assert_eq!(host.len(), 2, "a hand-written marker is one");
        assert!(host[0].starts_with("ns: template <> "), "{}", host[0]);
        assert!(
            same(
                &host,
                &annotated(&special("double")).unwrap(),
                "for compute_90"
            )
            .is_err()
        );
        // A raw string whose line starts with `#` is no line marker.
        let raw = format!("const char *s = R\"x(\n# )x\";\n{}", source(64));
        assert_eq!(annotated(&raw).unwrap().len(), 2);
    }

    #[test]
    fn a_specialization_only_a_gpu_sees_is_refused() {
        let primary = "template <class T> __attribute__((global)) void sc(__attribute__((annotate(\"memplan:\" \"writes\" \":\" \"n\"))) T *p, int n) {}\n";
        let host = annotated(primary).unwrap();
        let device = format!(
            "{primary}template <> __attribute__((global)) void sc<int>(int *p, int n) {{}}\n"
        );
        assert!(same(&host, &annotated(&device).unwrap(), "for compute_90").is_err());
    }

    #[test]
    fn specializations_are_found_however_spaced_or_attributed() {
        let code = "template < > __attribute__((global)) void sc < int > (int *p, int n) {}\n\
                    namespace ns { template<> [[deprecated]] void ns::sp<S>(S *p); }\n\
                    template <class T> void primary(T *p) {}\n";
        assert_eq!(specialized(code), ["sc", "sp"]);
    }

    #[test]
    fn a_contract_the_lexing_lost_is_an_error() {
        // An unclosed character literal swallows the rest.
        let text = format!("char c = '\\\"; {}", source(64));
        assert!(annotated(&text).is_err());
    }
}
