//! Syntax as compact text, for messages, labels and names: `0 .. n / 2`
//! (as tokens print) becomes `0..n / 2`.

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

#[cfg(test)]
mod tests {
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
    }
}
