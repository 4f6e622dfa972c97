//! Syntax as compact text, for messages, labels and names: `0 .. n / 2`
//! (as tokens print) becomes `0..n / 2`, `r . len ()` becomes `r.len()`.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::ToTokens;

/// Tokens as compact text: `0 .. n / 2` becomes `0..n / 2`. A group
/// without delimiters (what a `macro_rules!` fragment such as `$e:expr`
/// arrives in) is written in parentheses, as it groups: `$e * 2` with `$e`
/// = `n + 1` is `(n + 1) * 2`, never the `n + 1 * 2` rustc prints, so that
/// text names one meaning.
pub fn text(node: &impl ToTokens) -> String {
    let text = parenthesized(node.to_token_stream()).to_string();
    let mut compact = text
        .replace(" ..= ", "..=")
        .replace("..= ", "..=")
        .replace(" ..=", "..=")
        .replace(" .. ", "..")
        .replace(" ..", "..")
        .replace(".. ", "..");
    for (spaced, tight) in [
        ("( ", "("),
        (" )", ")"),
        (" ,", ","),
        (" [", "["),
        ("[ ", "["),
        (" ]", "]"),
        (" :: ", "::"),
        (":: ", "::"),
        // A method call or a field, `r . len ()`: ranges are done above.
        (" . ", "."),
    ] {
        compact = compact.replace(spaced, tight);
    }
    // `f (x)` is a call, `n / (2 * m)` is not: keep the space after operators.
    let mut text = String::with_capacity(compact.len());
    let mut chars = compact.chars().peekable();
    while let Some(c) = chars.next() {
        let call = c == ' '
            && chars.peek() == Some(&'(')
            && text.ends_with(|p: char| p.is_alphanumeric() || p == '_');
        if !call {
            text.push(c);
        }
    }
    text
}

/// `tokens` with every undelimited group in parentheses.
fn parenthesized(tokens: TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => {
                let delimiter = match group.delimiter() {
                    Delimiter::None => Delimiter::Parenthesis,
                    other => other,
                };
                let mut new = Group::new(delimiter, parenthesized(group.stream()));
                new.set_span(group.span());
                TokenTree::Group(new)
            }
            other => other,
        })
        .collect()
}

/// `text` with every whole word `from` (not part of a longer name) made
/// `to`: `c * m..(c + 1) * m` with `c` as `c′` is `c′ * m..(c′ + 1) * m`.
pub fn rename_word(text: &str, from: &str, to: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '′';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        // The character before, which may be one already written out.
        let before = rest[..at].chars().next_back().or(out.chars().next_back());
        let after = rest[at + from.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(word) || after.is_some_and(word) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn renames_whole_words_only() {
        assert_eq!(
            rename_word("c * m..(c + 1) * m", "c", "c′"),
            "c′ * m..(c′ + 1) * m"
        );
        assert_eq!(rename_word("cap - c..chunk", "c", "c′"), "cap - c′..chunk");
        assert_eq!(rename_word("c_1 + c", "c", "d"), "c_1 + d");
        assert_eq!(rename_word("cc + c", "c", "c′"), "cc + c′");
    }

    use super::*;
    use quote::quote;

    #[test]
    fn undelimited_groups_keep_their_grouping() {
        // What `$e * 2` with `$e = n + 1` arrives as from a `macro_rules!`.
        let group = Group::new(Delimiter::None, quote!(n + 1));
        let expr: syn::Expr = syn::parse2(quote!(#group * 2)).unwrap();
        assert_eq!(text(&expr), "(n + 1) * 2");
        let plain: syn::Expr = syn::parse_str("n + 1 * 2").unwrap();
        assert_eq!(text(&plain), "n + 1 * 2");
    }

    #[test]
    fn paths_and_ranges_are_compact() {
        let path: syn::Path = syn::parse_str("memplan_kernels :: ADD_ONE").unwrap();
        assert_eq!(text(&path), "memplan_kernels::ADD_ONE");
        let range: syn::Expr = syn::parse_str("d [0 .. n / 2]").unwrap();
        assert_eq!(text(&range), "d[0..n / 2]");
        let call: syn::Expr = syn::parse_str("slot [.. halo . len ()]").unwrap();
        assert_eq!(text(&call), "slot[..halo.len()]");
        let float: syn::Expr = syn::parse_str("2.0 * a").unwrap();
        assert_eq!(text(&float), "2.0 * a");
    }
}
