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
pub fn annotated(preprocessed: &str) -> Vec<String> {
    const MARKER: &str = "\"memplan:\"";
    let code = without_line_markers(preprocessed);
    let bytes = code.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    let mut lists: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                // `name(__attribute__((annotate("memplan:" ...`: the list
                // is the fourth parenthesis out.
                if code[at..].starts_with(MARKER)
                    && let Some(&list) = open.len().checked_sub(4).map(|i| &open[i])
                    && !lists.contains(&list)
                {
                    lists.push(list);
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
    lists
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
        .collect()
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
            annotated(&source(64)),
            [
                "tiled(__attribute__((annotate(\"memplan:\" \"writes\" \":\" \"64 * n\"))) float *out, int n)"
            ]
        );
        assert!(annotated("void plain(float *p, int n) {}").is_empty());
    }

    #[test]
    fn a_contract_that_differs_by_architecture_is_refused() {
        let host = annotated(&source(64));
        assert_eq!(
            same(&host, &annotated(&source(64)), "for compute_90"),
            Ok(())
        );
        let error = same(&host, &annotated(&source(128)), "for compute_90").unwrap_err();
        assert!(error.contains("compiled for compute_90"), "{error}");
        assert!(error.contains("\"128 * n\""), "{error}");
        assert!(same(&host, &[], "for compute_80").is_err());
    }
}
