//! Syntax as compact text, for messages, labels and names: `0 .. n / 2`
//! (as tokens print) becomes `0..n / 2`.

use quote::ToTokens;

/// Tokens as compact text: `0 .. n / 2` becomes `0..n / 2`.
pub fn text(node: &impl ToTokens) -> String {
    let text = node.to_token_stream().to_string();
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
