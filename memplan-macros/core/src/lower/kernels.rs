//! Kernel declarations, checked against the C++ while the program
//! compiles.
//!
//! The macro cannot read the module's signatures (they are in a static of
//! another crate, made by its build script), but constant evaluation can:
//! each checked declaration becomes a constant `Declared` and a constant
//! that evaluates the runtime's `check_kernel` on it, which panics with the
//! mismatch, so the error is rustc's, at the declaration. The symbol the
//! engine loads comes from the same check.

use super::names::private;
use crate::ir::{Kernel, KernelParamKind, Plan};
use crate::syntax::SliceAccess;
use crate::text::text;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Type};

/// The constant describing kernel `index`'s declaration, inside the plan's
/// `const _` block.
fn declared(index: usize) -> Ident {
    format_ident!("__MEMPLAN_KERNEL_{}", index)
}

/// The kernels' declarations and their checks, for the plan's `const _`
/// block; and each kernel's compiled code, for its `PlanInfo`.
pub fn lower(plan: &Plan) -> (TokenStream, Vec<TokenStream>) {
    let private = private();
    let code = plan.kernels.iter().enumerate().map(|(index, kernel)| {
        let entry = symbol(plan, index);
        let path = &plan.modules[kernel.module];
        let module = quote_spanned!(path.span()=> &#path);
        let params = kernel.params.iter().map(|param| match &param.kind {
            KernelParamKind::Slice { .. } => quote!(#private::ParamType::POINTER),
            KernelParamKind::Value(ty) => {
                quote_spanned!(ty.span()=> #private::ParamType::of::<#ty>())
            }
        });
        quote!(#private::KernelCode::new(#entry, #module, &[#(#params),*]))
    });
    let code = code.collect();
    (checks(plan), code)
}

/// The declarations and their checks. An `unsafe kernel` is the user's
/// promise instead: an `unsafe` block with their `unsafe` token, so that a
/// crate that forbids `unsafe_code` cannot make it.
fn checks(plan: &Plan) -> TokenStream {
    let private = private();
    let items = plan.kernels.iter().enumerate().map(|(index, kernel)| {
        if kernel.misdeclared {
            return quote!();
        }
        if let Some(unsafe_token) = &kernel.unchecked {
            // Every token of the block at the user's `unsafe`: a block
            // spanning generated tokens counts as the macro's, which the
            // `unsafe_code` lint does not look at.
            return quote_spanned! {unsafe_token.span=>
                const _: () = unsafe { #private::promise_kernel_matches() };
            };
        }
        {
            let name = declared(index);
            let module = &plan.modules[kernel.module];
            let value = declaration(plan, kernel);
            // The error points at the declaration's name.
            let check = quote_spanned! {kernel.name.span()=>
                const _: () = match #private::check_kernel(&#module, &#name) {
                    ::core::result::Result::Ok(_) => (),
                    ::core::result::Result::Err(message) => ::core::panic!("{}", message.as_str()),
                };
            };
            quote! {
                const #name: #private::Declared = #value;
                #check
            }
        }
    });
    quote!(#(#items)*)
}

/// The symbol expression of kernel `index`, for its `KernelInfo`.
fn symbol(plan: &Plan, index: usize) -> TokenStream {
    let kernel = &plan.kernels[index];
    if kernel.unchecked.is_some() {
        // The user's word: the symbol as written, or the kernel's name.
        let symbol = cpp_name(kernel);
        return quote!(#symbol);
    }
    let (private, name) = (private(), declared(index));
    let module = &plan.modules[kernel.module];
    quote!(#private::kernel_symbol(&#module, &#name))
}

/// The C++ name looked up: after `as`, or the declared name (`r#loop` is
/// `loop`).
fn cpp_name(kernel: &Kernel) -> String {
    match &kernel.cpp_name {
        Some(name) => name.value(),
        None => syn::ext::IdentExt::unraw(&kernel.name).to_string(),
    }
}

fn declaration(plan: &Plan, kernel: &Kernel) -> TokenStream {
    let private = private();
    let name = cpp_name(kernel);
    let rust_name = kernel.name.to_string();
    let module = text(&plan.modules[kernel.module]);
    let names = kernel.params.iter().map(|param| param.name.to_string());
    let params = kernel.params.iter().map(|param| {
        let name = param.name.to_string();
        let spelled = param.spelled();
        match &param.kind {
            KernelParamKind::Slice {
                access,
                elem,
                extent,
            } => {
                let access = match access {
                    SliceAccess::Read => quote!(Read),
                    SliceAccess::ReadWrite => quote!(ReadWrite),
                    SliceAccess::Write => quote!(Write),
                    SliceAccess::Atomic => quote!(Atomic),
                };
                let elem_spelled = text(elem);
                let elem = rust_type(elem);
                let extent = match extent.as_ref().and_then(|e| extent_terms(e, kernel)) {
                    Some(terms) => {
                        quote!(::core::option::Option::Some(&[#(#private::ExtentTerm::#terms),*]))
                    }
                    None => quote!(::core::option::Option::None),
                };
                quote!(#private::DeclaredParam::Buffer {
                    name: #name,
                    elem: #elem,
                    access: #private::Access::#access,
                    extent: #extent,
                    elem_spelled: #elem_spelled,
                    ty: #spelled,
                })
            }
            KernelParamKind::Value(ty) => {
                let ty = rust_type(ty);
                quote!(#private::DeclaredParam::Value { name: #name, value: #ty, ty: #spelled })
            }
        }
    });
    quote! {
        #private::Declared {
            name: #name,
            rust_name: #rust_name,
            module: #module,
            params: &[#(#params),*],
            names: &[#(#names),*],
        }
    }
}

/// A declared type as the check knows it, read from the type's
/// `KernelValue` impl (never from its spelling). The type's tokens are the
/// user's, so rustc reports a type that is not a `KernelValue` at them.
fn rust_type(ty: &Type) -> TokenStream {
    let private = private();
    quote_spanned! {ty.span()=> #private::RustType::of::<#ty>() }
}

/// An extent as `ExtentTerm` variants in postfix order, each parameter by
/// its position; `None` for one `extent::check_declaration` refused.
fn extent_terms(extent: &Expr, kernel: &Kernel) -> Option<Vec<TokenStream>> {
    let terms = postfix(extent, kernel).ok()?;
    Some(
        terms
            .into_iter()
            .map(|term| match term {
                Term::Param(position) => {
                    let position = Literal::u16_unsuffixed(position);
                    quote!(Param(#position))
                }
                Term::Literal(value) => {
                    let value = Literal::u64_unsuffixed(value);
                    quote!(Literal(#value))
                }
                Term::Op(op) => match op {
                    memplan_model::Term::Add => quote!(Add),
                    memplan_model::Term::Sub => quote!(Sub),
                    memplan_model::Term::Mul => quote!(Mul),
                    memplan_model::Term::Div => quote!(Div),
                    _ => quote!(Rem),
                },
            })
            .collect(),
    )
}

/// An extent that `new` computes from the values the kernel receives: its
/// text, and its program, whose input `i` is the value of parameter `i`.
pub fn extent_program(
    extent: &Expr,
    kernel: &Kernel,
) -> syn::Result<(String, Vec<memplan_model::Term>)> {
    let terms = postfix(extent, kernel)?.into_iter().map(|term| match term {
        Term::Param(position) => memplan_model::Term::Input(position),
        Term::Literal(value) => memplan_model::Term::Literal(value),
        Term::Op(op) => op,
    });
    Ok((text(extent), terms.collect()))
}

/// One step of an extent in postfix order: what both of the runtime's
/// spellings of it (a contract's `ExtentTerm`, a size program's `Term`)
/// are written from.
enum Term {
    Param(u16),
    Literal(u64),
    /// `Add`, `Sub`, `Mul`, `Div` or `Rem`: the variant's name in both.
    Op(memplan_model::Term),
}

/// `extent` in postfix order, each name the position of a parameter of
/// `kernel`. `extent::check_declaration` refused anything else already.
fn postfix(extent: &Expr, kernel: &Kernel) -> syn::Result<Vec<Term>> {
    fn walk(expr: &Expr, kernel: &Kernel, out: &mut Vec<Term>) -> syn::Result<()> {
        match expr {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => out.push(Term::Literal(int.base10_parse()?)),
            Expr::Path(path) => {
                let position = path
                    .path
                    .get_ident()
                    .and_then(|ident| kernel.params.iter().position(|p| p.name == *ident))
                    .ok_or_else(|| {
                        syn::Error::new_spanned(path, "not a parameter of the kernel")
                    })?;
                out.push(Term::Param(position as u16));
            }
            Expr::Paren(paren) => walk(&paren.expr, kernel, out)?,
            Expr::Group(group) => walk(&group.expr, kernel, out)?,
            Expr::Binary(binary) => {
                walk(&binary.left, kernel, out)?;
                walk(&binary.right, kernel, out)?;
                let op = match binary.op {
                    syn::BinOp::Add(_) => memplan_model::Term::Add,
                    syn::BinOp::Sub(_) => memplan_model::Term::Sub,
                    syn::BinOp::Mul(_) => memplan_model::Term::Mul,
                    syn::BinOp::Div(_) => memplan_model::Term::Div,
                    syn::BinOp::Rem(_) => memplan_model::Term::Rem,
                    _ => return Err(syn::Error::new_spanned(binary, "not an extent")),
                };
                out.push(Term::Op(op));
            }
            other => return Err(syn::Error::new_spanned(other, "not an extent")),
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(extent, kernel, &mut out)?;
    Ok(out)
}
