//! The `memplan!` language as a plain library: grammar, IR, checks and
//! lowering. The proc-macro crate `memplan-macros` is a thin shell around
//! [`expand`]; everything here runs (and is tested) without a compiler.
//! The language itself, for users, is described in the `memplan` crate's
//! [`language`](https://docs.rs/memplan/latest/memplan/language/index.html).
//!
//! The stages, each in its own module:
//! 1. [`syntax`]: syn parsers, one syntax tree node per construct;
//! 2. [`ir`]: names resolved, ops in program order, ranges symbolic ([`sym`]);
//! 3. [`check`]: every compile-time check, errors collected by [`errors`];
//! 4. [`lower`]: the plan type and its methods, as runtime calls.

#![warn(missing_docs)]
// Syntax and IR nodes are built once per macro call; boxing their large
// variants would buy nothing.
#![allow(clippy::large_enum_variant)]

pub mod check;
pub mod errors;
pub mod ir;
pub mod lower;
pub mod signatures;
pub mod sym;
pub mod syntax;
pub mod text;
mod where_ops_run;

use proc_macro2::TokenStream;
use quote::quote;

/// How deep brackets (and runs of prefix operators) may nest inside
/// `memplan!`: the parser recurses on them, and past this depth the macro
/// reports an error rather than overflow the compiler's stack.
pub const MAX_NESTING: usize = 128;

/// How many binary operators one expression may chain (`n + n + ...`):
/// syn's expression trees nest one level for each, and the code that
/// walks, prints and copies them recurses on it.
pub const MAX_OPERATORS: usize = 512;

/// The whole macro, for plans that reach memplan as `::memplan`: parse,
/// build the IR, check, lower. Never panics: every problem becomes a
/// `compile_error!` at the user's tokens.
pub fn expand(input: TokenStream) -> TokenStream {
    expand_in(&quote!(::memplan), input)
}

/// The macro as `memplan!` invokes it: `$crate; plans...`, where `$crate`
/// is the path to the memplan crate that the invocation's own crate
/// resolves it by. Generated code reaches memplan only through that path:
/// a crate that names something else `memplan` (`extern crate self as
/// memplan`, a renamed dependency) cannot make the code a plan lowers to
/// call its own functions in memplan's place.
pub fn expand_plans(input: TokenStream) -> TokenStream {
    let mut tokens = input.into_iter();
    let mut krate = TokenStream::new();
    for token in tokens.by_ref() {
        match &token {
            proc_macro2::TokenTree::Punct(punct) if punct.as_char() == ';' => {
                return expand_in(&krate, tokens.collect());
            }
            _ => krate.extend([token]),
        }
    }
    quote!(::core::compile_error! { "memplan's inner macro takes `$crate;` first" })
}

/// The whole macro, generating paths to memplan from `krate`.
fn expand_in(krate: &TokenStream, input: TokenStream) -> TokenStream {
    if let Some((span, message)) = too_deep(&input) {
        return syn::Error::new(span, message).to_compile_error();
    }
    let input: syntax::Input = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let mut out: TokenStream = input
        .errors
        .iter()
        .map(syn::Error::to_compile_error)
        .collect();
    let mut seen: Vec<&proc_macro2::Ident> = Vec::new();
    let built = signatures::Built::of_this_crate();
    for def in &input.plans {
        // Two plans of one name would be two types of one name: one error
        // here, at the second, rather than rustc's about generated items.
        if let Some(first) = seen.iter().find(|name| ***name == def.name) {
            let message = format!(
                "a plan named `{}` is already defined in this `memplan!` (line {})\n\n\
                 help: give one of them another name",
                def.name,
                first.span().start().line
            );
            out.extend(syn::Error::new(def.name.span(), message).to_compile_error());
            continue;
        }
        seen.push(&def.name);
        out.extend(expand_plan(krate, def, built));
    }
    out
}

/// One plan: its code, or its errors and its type's interface without a
/// body (so that code using the plan does not add errors of its own).
fn expand_plan(
    krate: &TokenStream,
    def: &syntax::PlanDef,
    built: Option<&signatures::Built>,
) -> TokenStream {
    let errors = errors::Errors::new();
    let plan = ir::build(def, &errors);
    let analysis = check::run(&plan, &errors);
    match errors.finish() {
        Ok(()) => lower::lower(krate, &plan, &analysis, lower::Bodies::Ops, built),
        Err(error) => {
            let errors = error.to_compile_error();
            let interface =
                lower::lower(krate, &plan, &analysis, lower::Bodies::Placeholder, built);
            quote!(#errors #interface)
        }
    }
}

/// Builds the IR and runs every check; all errors of the plan together.
pub fn analyze(def: &syntax::PlanDef) -> syn::Result<(ir::Plan, check::Analysis)> {
    let errors = errors::Errors::new();
    let plan = ir::build(def, &errors);
    let analysis = check::run(&plan, &errors);
    errors.finish()?;
    Ok((plan, analysis))
}

/// Where `tokens` nest deeper than [`MAX_NESTING`], or chain more than
/// [`MAX_OPERATORS`] operators in one expression, if they do, and the
/// message: walked with an explicit stack, so that this check cannot
/// overflow either.
fn too_deep(tokens: &TokenStream) -> Option<(proc_macro2::Span, String)> {
    use proc_macro2::TokenTree;
    let nested = || {
        format!(
            "memplan reads brackets nested at most {MAX_NESTING} deep\n\n\
             help: name a part of this with a `const` or a function"
        )
    };
    // Each level: its tokens, and the operators since its last `;` or `,`.
    let mut stack = vec![(tokens.clone().into_iter(), 0usize)];
    let mut prefix_run = 0usize;
    while let Some((top, operators)) = stack.last_mut() {
        match top.next() {
            Some(TokenTree::Group(group)) => {
                prefix_run = 0;
                if stack.len() >= MAX_NESTING {
                    return Some((group.span_open(), nested()));
                }
                stack.push((group.stream().into_iter(), 0));
            }
            Some(TokenTree::Punct(punct)) => {
                let c = punct.as_char();
                if matches!(c, ';' | ',') {
                    *operators = 0;
                } else if matches!(c, '+' | '-' | '*' | '/' | '%') {
                    *operators += 1;
                    if *operators > MAX_OPERATORS {
                        let message = format!(
                            "memplan reads at most {MAX_OPERATORS} operators in one expression\n\n\
                             help: name a part of this with a `const` or a function"
                        );
                        return Some((punct.span(), message));
                    }
                }
                if matches!(c, '-' | '!' | '*' | '&') {
                    prefix_run += 1;
                    if prefix_run > MAX_NESTING {
                        return Some((punct.span(), nested()));
                    }
                } else {
                    prefix_run = 0;
                }
            }
            Some(_) => prefix_run = 0,
            None => {
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_past_the_limit_is_an_error_not_a_crash() {
        let deep = format!("{}n{}", "(".repeat(1000), ")".repeat(1000));
        let text = format!("plan P(n: usize) {{ device d: [f32; {deep}]; fill d with 0.0; }}");
        let out = expand(text.parse().unwrap()).to_string();
        assert!(out.contains("nested at most 128 deep"), "{out}");
        let minus = format!(
            "plan P(n: usize) {{ device d: [f32; {}n]; }}",
            "- ".repeat(10_000)
        );
        let out = expand(minus.parse().unwrap()).to_string();
        assert!(out.contains("nested at most 128 deep"), "{out}");
    }

    #[test]
    fn long_chains_are_an_error_not_a_crash() {
        let long = vec!["n"; 10_000].join(" + ");
        let text = format!("plan P(n: usize) {{ device d: [f32; {long}]; fill d with 0.0; }}");
        let out = expand(text.parse().unwrap()).to_string();
        assert!(
            out.contains("at most 512 operators in one expression"),
            "{out}"
        );
        // The most a chain may have is read, and the plan compiles.
        let longest = vec!["n"; MAX_OPERATORS + 1].join(" + ");
        let text = format!("plan P(n: usize) {{ device d: [f32; {longest}]; fill d with 0.0; }}");
        let out = expand(text.parse().unwrap()).to_string();
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn long_extents_are_an_error_not_a_crash() {
        // Within the operators an expression may chain, deeper than an
        // extent may nest.
        let long = vec!["n"; 300].join(" + ");
        let text = format!(
            "plan P(n: usize) {{ kernel k(d: &mut [f32; {long}], n: i32) from M; \
             device d: [f32; n]; fill d with 0.0; launch k<<<1, 1>>>(d, n as i32); }}"
        );
        let out = expand(text.parse().unwrap()).to_string();
        assert!(out.contains("an extent nested more than 128 deep"), "{out}");
    }

    #[test]
    fn nesting_within_the_limit_reads() {
        let deep = format!("{}n{}", "(".repeat(100), ")".repeat(100));
        let text = format!("plan P(n: usize) {{ device d: [f32; {deep}]; fill d with 0.0; }}");
        let out = expand(text.parse().unwrap()).to_string();
        assert!(!out.contains("compile_error"), "{out}");
    }
}
