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
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Expr, Type};

/// The constant describing kernel `index`'s declaration, inside the plan's
/// `const _` block.
fn declared(index: usize) -> Ident {
    format_ident!("__MEMPLAN_KERNEL_{}", index)
}

/// The declarations and their checks, for the plan's `const _` block. An
/// `unsafe kernel` is the user's promise instead: an `unsafe` block with
/// their `unsafe` token, so that a crate that forbids `unsafe_code` cannot
/// make it.
pub fn checks(plan: &Plan) -> TokenStream {
    let private = private();
    let items = plan.kernels.iter().enumerate().map(|(index, kernel)| {
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
pub fn symbol(plan: &Plan, index: usize) -> TokenStream {
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
    let params = kernel.params.iter().map(|param| {
        let name = param.name.to_string();
        match &param.kind {
            KernelParamKind::Slice { access, elem, .. } => {
                let access = match access {
                    SliceAccess::Read => quote!(Read),
                    SliceAccess::ReadWrite => quote!(ReadWrite),
                    SliceAccess::Write => quote!(Write),
                };
                let spelled = param.spelled();
                let elem = scalar(elem);
                quote!(#private::DeclaredParam::Buffer {
                    name: #name,
                    elem: #elem,
                    access: #private::Access::#access,
                    ty: #spelled,
                })
            }
            KernelParamKind::Value(ty) => {
                let spelled = param.spelled();
                let ty = scalar(ty);
                quote!(#private::DeclaredParam::Value { name: #name, scalar: #ty, ty: #spelled })
            }
        }
    });
    quote! {
        #private::Declared {
            name: #name,
            rust_name: #rust_name,
            module: #module,
            params: &[#(#params),*],
        }
    }
}

/// A declared type as the check knows it: a primitive, or a named type by
/// its last path segment (which a C++ class of that name matches).
fn scalar(ty: &Type) -> TokenStream {
    let private = private();
    let primitive = |name: &str| {
        let variant = match name {
            "bool" => "Bool",
            "i8" => "I8",
            "u8" => "U8",
            "i16" => "I16",
            "u16" => "U16",
            "i32" => "I32",
            "u32" => "U32",
            "i64" => "I64",
            "u64" => "U64",
            "isize" => "Isize",
            "usize" => "Usize",
            "f32" => "F32",
            "f64" => "F64",
            _ => return None,
        };
        Some(Ident::new(variant, Span::call_site()))
    };
    let named = match ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .map(|last| (primitive(&last.ident.to_string()), last.ident.to_string())),
        _ => None,
    };
    match named {
        Some((Some(variant), _)) => quote!(#private::RustScalar::#variant),
        Some((None, name)) => quote!(#private::RustScalar::Named(#name)),
        // An array, a tuple, a reference: nothing a C++ parameter is.
        None => {
            let spelled = text(ty);
            quote!(#private::RustScalar::Named(#spelled))
        }
    }
}

/// An extent that `new` computes from the values the kernel receives:
/// `Size(text, &[terms])`, whose input `i` is the value of parameter `i`.
pub fn extent_program(extent: &Expr, kernel: &Kernel) -> syn::Result<TokenStream> {
    fn terms(expr: &Expr, kernel: &Kernel, out: &mut Vec<TokenStream>) -> syn::Result<()> {
        match expr {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => {
                let value: u64 = int.base10_parse()?;
                out.push(quote!(Literal(#value)));
            }
            Expr::Path(path) => {
                let position = path
                    .path
                    .get_ident()
                    .and_then(|ident| kernel.params.iter().position(|p| p.name == *ident))
                    .ok_or_else(|| {
                        syn::Error::new_spanned(path, "not a parameter of the kernel")
                    })?;
                let position = position as u16;
                out.push(quote!(Input(#position)));
            }
            Expr::Paren(paren) => terms(&paren.expr, kernel, out)?,
            Expr::Group(group) => terms(&group.expr, kernel, out)?,
            Expr::Binary(binary) => {
                terms(&binary.left, kernel, out)?;
                terms(&binary.right, kernel, out)?;
                out.push(match binary.op {
                    syn::BinOp::Add(_) => quote!(Add),
                    syn::BinOp::Sub(_) => quote!(Sub),
                    syn::BinOp::Mul(_) => quote!(Mul),
                    syn::BinOp::Div(_) => quote!(Div),
                    syn::BinOp::Rem(_) => quote!(Rem),
                    _ => return Err(syn::Error::new_spanned(binary, "not an extent")),
                });
            }
            // `extent::check_declaration` refused anything else already.
            other => return Err(syn::Error::new_spanned(other, "not an extent")),
        }
        Ok(())
    }
    let mut out = Vec::new();
    terms(extent, kernel, &mut out)?;
    let text = text(extent);
    Ok(quote!(Size(#text, &[#(#out),*])))
}
