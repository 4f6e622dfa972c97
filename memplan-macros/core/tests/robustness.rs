//! `memplan!` must answer any input with code or with errors, never with a
//! panic (which rustc shows as "proc macro panicked", without a span).
//!
//! 100,000 inputs in all: random token trees over the language's words, and
//! valid plans (the examples and pass cases) with tokens deleted, repeated,
//! swapped or replaced.

use memplan_macros_core::expand;
use proc_macro2::{TokenStream, TokenTree};
use proptest::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::OnceLock;

/// Words of the language and of the Rust around it, valid and not.
const WORDS: &[&str] = &[
    "plan",
    "P",
    "pub",
    "n",
    "usize",
    "f32",
    "i32",
    "u8",
    "&",
    "mut",
    "out",
    ":",
    ";",
    ",",
    "::",
    "kernel",
    "from",
    "memplan_kernels",
    "ADD_ONE",
    "VECTOR_ADD",
    "host",
    "device",
    "stream",
    "event",
    "on",
    "copy",
    "->",
    "fill",
    "with",
    "launch",
    "<<",
    "<",
    ">",
    ">>",
    "record",
    "wait",
    "sync",
    "all",
    "alloc",
    "free",
    "pinned",
    "pageable",
    "mapped",
    "write_combined",
    "portable",
    "registered",
    "priority",
    "high",
    "normal",
    "..",
    "..=",
    "0",
    "1",
    "2",
    "64",
    "4294967296",
    "340282366920938463463374607431768211455",
    "/",
    "+",
    "-",
    "*",
    "%",
    "as",
    "a",
    "b",
    "d",
    "s",
    "e",
    "tmp",
    "blocks",
    "__memplan_core",
    "1.5",
    "'x'",
    "\"doc\"",
    "#",
    "=",
    "!",
    "self",
    "Self",
    "true",
    "data",
    "process_data",
    "vadd",
];

fn tree() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(WORDS).prop_map(str::to_owned);
    leaf.prop_recursive(4, 64, 12, |inner| {
        (
            prop::sample::select(&["()", "[]", "{}"][..]),
            prop::collection::vec(inner, 0..12),
        )
            .prop_map(|(delimiters, items)| {
                let (open, close) = delimiters.split_at(1);
                format!("{open} {} {close}", items.join(" "))
            })
    })
}

fn random_input() -> impl Strategy<Value = String> {
    prop::collection::vec(tree(), 0..24).prop_map(|trees| trees.join(" "))
}

/// The bodies of the `memplan! { ... }` blocks of the examples and pass
/// cases, as flat token lists.
fn corpus() -> &'static [Vec<String>] {
    static CORPUS: OnceLock<Vec<Vec<String>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut plans = Vec::new();
        for dir in ["examples", "tests/ui/pass"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                let Ok(source) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let Ok(file) = syn::parse_file(&source) else {
                    continue;
                };
                for item in file.items {
                    if let syn::Item::Macro(item) = item
                        && item.mac.path.is_ident("memplan")
                    {
                        plans.push(flatten(item.mac.tokens));
                    }
                }
            }
        }
        assert!(
            plans.len() >= 5,
            "the corpus found only {} plans",
            plans.len()
        );
        plans
    })
}

fn flatten(tokens: TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for token in tokens {
        match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                    proc_macro2::Delimiter::Bracket => ("[", "]"),
                    proc_macro2::Delimiter::Brace => ("{", "}"),
                    proc_macro2::Delimiter::None => ("", ""),
                };
                out.push(open.to_owned());
                out.extend(flatten(group.stream()));
                out.push(close.to_owned());
            }
            TokenTree::Punct(punct) => {
                let joint = punct.spacing() == proc_macro2::Spacing::Joint;
                // Keep joint punctuation (`->`, `<<`, `..`) together.
                match out.last_mut() {
                    Some(last) if last.ends_with('\u{1}') => {
                        last.pop();
                        last.push(punct.as_char());
                    }
                    _ => out.push(punct.as_char().to_string()),
                }
                if joint {
                    out.last_mut().unwrap().push('\u{1}');
                }
            }
            other => out.push(other.to_string()),
        }
    }
    out
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Repeat(usize),
    Swap(usize, usize),
    Replace(usize, &'static str),
}

fn mutated_plan() -> impl Strategy<Value = String> {
    let corpus = corpus();
    (0..corpus.len(), prop::collection::vec(mutation(), 1..4)).prop_map(
        move |(index, mutations)| {
            let mut tokens = corpus[index].clone();
            // Delimiters stay where they are, so that most mutants still lex
            // and reach the later stages.
            let delimiter =
                |token: &String| matches!(token.as_str(), "(" | ")" | "[" | "]" | "{" | "}");
            for mutation in mutations {
                let len = tokens.len();
                match mutation {
                    Mutation::Delete(at) if !delimiter(&tokens[at % len]) => {
                        tokens.remove(at % len);
                    }
                    Mutation::Repeat(at) if !delimiter(&tokens[at % len]) => {
                        let token = tokens[at % len].clone();
                        tokens.insert(at % len, token);
                    }
                    Mutation::Swap(a, b)
                        if !delimiter(&tokens[a % len]) && !delimiter(&tokens[b % len]) =>
                    {
                        tokens.swap(a % len, b % len);
                    }
                    Mutation::Replace(at, word) if !delimiter(&tokens[at % len]) => {
                        tokens[at % len] = word.to_owned();
                    }
                    _ => {}
                }
            }
            tokens.join(" ").replace('\u{1}', "")
        },
    )
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Repeat),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (any::<usize>(), prop::sample::select(WORDS))
            .prop_map(|(at, word)| Mutation::Replace(at, word)),
    ]
}

/// Expands `text`, if it lexes; fails the case if the macro panics.
fn expands_without_panic(text: &str) -> Result<(), TestCaseError> {
    let Ok(tokens) = text.parse::<TokenStream>() else {
        return Ok(());
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| expand(tokens)));
    prop_assert!(outcome.is_ok(), "memplan! panicked on:\n{text}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 50_000, ..ProptestConfig::default() })]

    #[test]
    fn random_token_trees_never_panic(text in random_input()) {
        expands_without_panic(&text)?;
    }

    #[test]
    fn mutated_plans_never_panic(text in mutated_plan()) {
        expands_without_panic(&text)?;
    }
}

/// A fragment of a `macro_rules!` (`$e:expr`) arrives in an undelimited
/// group, which prints without parentheses: `$e * 2` with `$e = n + 1`
/// prints as `n + 1 * 2`. The size the plan runs with is the one the
/// checks proved, not another expression that prints alike.
#[test]
fn sizes_from_macro_fragments_keep_their_meaning() {
    use proc_macro2::{Delimiter, Group};
    use quote::quote;
    let group = Group::new(Delimiter::None, quote!(n + 1));
    let plan = quote! {
        plan P(n: usize) {
            device d: [f32; 4 * n], e: [f32; 4 * n];
            stream s1, s2;
            on s1 { fill e[0..#group * 2] with 1.0; fill d[0..n + 1 * 2] with 1.0; }
            on s2 { fill d[n + 2..4 * n] with 2.0; }
        }
    };
    let expanded = memplan_macros_core::expand(plan).to_string();
    assert!(!expanded.contains("compile_error"), "{expanded}");
    // Two sizes, each computed as written.
    assert!(expanded.contains("\"(n + 1) * 2\""), "{expanded}");
    assert!(expanded.contains("\"n + 1 * 2\""), "{expanded}");
}
