//! Every help of `tests/ui/fail/` that is machine-applicable (a list of
//! edits, see `memplan-macros/core/tests/common/help.rs`), applied as
//! written: the error it was given for is gone and no error is new; where
//! no error is left, the edited case is compiled and run by trybuild with
//! the pass cases. Every other help is advice, and `tests/ui/helps.txt`
//! says which is which, error by error.
//!
//! Refresh `helps.txt` with `HELPS=overwrite cargo test --test ui` after a
//! deliberate change, and review the diff.

#[path = "../../memplan-macros/core/tests/common/help.rs"]
mod help;

use proc_macro2::{TokenStream, TokenTree};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The fail cases with their helps applied that must compile, written to
/// `dir`; panics where a help cannot be applied, leaves its error, or
/// makes a new one, or where `helps.txt` says otherwise.
pub fn applied_cases(dir: &Path) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut cases: Vec<PathBuf> = (std::fs::read_dir(root.join("fail")).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    cases.sort();
    std::fs::create_dir_all(dir).unwrap();
    let (mut listing, mut compiled) = (String::new(), Vec::new());
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy();
        let source = std::fs::read_to_string(case).unwrap();
        let errors = memplan_errors(&source);
        let mut fixed = source.clone();
        let mut advice = Vec::new();
        for (line, message) in &errors {
            let help = message.split_once("help: ").map_or("", |(_, help)| help);
            if help::edits(help).is_some() {
                fixed = help::apply(&fixed, help, Some(*line)).unwrap_or_else(|why| {
                    panic!("{name}:{line}: the help cannot be applied: {why}\n{help}")
                });
                writeln!(listing, "{name}:{line}: edit").unwrap();
            } else {
                advice.push((*line, first_line(message)));
                writeln!(listing, "{name}:{line}: advice").unwrap();
            }
        }
        if fixed == source {
            continue;
        }
        let after = memplan_errors(&fixed);
        for (line, message) in &after {
            assert!(
                advice.contains(&(*line, first_line(message))),
                "{name}: with its helps applied, line {line} has an error it did not have:\n\
                 {message}\n\n{fixed}"
            );
        }
        if after.is_empty() {
            let path = dir.join(&*name);
            std::fs::write(&path, fixed).unwrap();
            writeln!(listing, "{name}: compiles with its helps applied").unwrap();
            compiled.push(path);
        }
    }
    compare_listing(&root.join("helps.txt"), &listing);
    compiled
}

/// `helps.txt` is `listing`, or is made so with `HELPS=overwrite`.
fn compare_listing(path: &Path, listing: &str) {
    const HEAD: &str = "\
# Each error memplan gives for a case of tests/ui/fail/: `edit` where its help is
# machine-applicable (tests/ui/helps.rs applies it and checks the result), `advice`
# where it is not. A case whose every error is an edit compiles with them applied.
";
    let listing = format!("{HEAD}{listing}");
    if std::env::var_os("HELPS").is_some_and(|v| v == "overwrite") {
        std::fs::write(path, &listing).unwrap();
        return;
    }
    let written = std::fs::read_to_string(path).unwrap_or_default();
    if written != listing {
        let differ = (written.lines().zip(listing.lines()))
            .find(|(a, b)| a != b)
            .map_or(
                "(a line added or removed at the end)".to_owned(),
                |(a, b)| format!("`{a}` is now `{b}`"),
            );
        panic!(
            "tests/ui/helps.txt is not what the helps are now: {differ}\n\
             refresh it with HELPS=overwrite cargo test --test ui and review the diff"
        );
    }
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or("").to_owned()
}

/// The line and message of each error memplan's macro gives for the
/// `memplan! { ... }` blocks of `source`, each expanded alone with every
/// other character blanked (so that lines keep their numbers).
fn memplan_errors(source: &str) -> Vec<(usize, String)> {
    let mut errors = Vec::new();
    for body in macro_bodies(source) {
        let masked: String = (source.char_indices())
            .map(|(at, c)| {
                if body.contains(&at) || c == '\n' {
                    c
                } else {
                    ' '
                }
            })
            .collect();
        let tokens: TokenStream = masked.parse().expect("the case's plans are tokens");
        compile_errors(&memplan_macros_core::expand(tokens), &mut errors);
    }
    errors
}

/// The insides of each `memplan! { ... }` of `source`.
fn macro_bodies(source: &str) -> Vec<std::ops::Range<usize>> {
    let mut bodies = Vec::new();
    for (at, _) in source.match_indices("memplan!") {
        let rest = &source[at + "memplan!".len()..];
        let Some(open) = rest.find(|c: char| !c.is_whitespace()) else {
            continue;
        };
        if !rest[open..].starts_with('{') {
            continue;
        }
        let start = at + "memplan!".len() + open + 1;
        let mut depth = 1usize;
        for (offset, c) in source[start..].char_indices() {
            depth = match c {
                '{' => depth + 1,
                '}' => depth - 1,
                _ => depth,
            };
            if depth == 0 {
                bodies.push(start..start + offset);
                break;
            }
        }
    }
    bodies
}

/// The `compile_error!`s in `tokens`: each one's line and message.
fn compile_errors(tokens: &TokenStream, out: &mut Vec<(usize, String)>) {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Ident(ident) if ident == "compile_error" => {
                if let Some(TokenTree::Group(group)) = trees.get(i + 2) {
                    let literal: syn::LitStr = syn::parse2(group.stream()).unwrap();
                    out.push((literal.span().start().line, literal.value()));
                }
            }
            TokenTree::Group(group) => compile_errors(&group.stream(), out),
            _ => {}
        }
    }
}
