//! Kernel declarations, checked against the C++ while the program
//! compiles.
//!
//! The macro cannot know which image a path such as `kernels::BLUR`
//! names, but constant evaluation can: each checked declaration becomes a
//! constant `Declared` and a constant that evaluates the runtime's
//! `check_kernel` on it, which panics with the mismatch, so the error is
//! rustc's, at the declaration. The symbol the engine loads comes from the
//! same check.
//!
//! Where the crate's own build step wrote the signatures of an image of
//! the path's last name ([`Built`]), the macro runs the same check and
//! predicts the message; it then words the error as an ordinary one, a
//! trait bound with that message that fails exactly when rustc confirms
//! the prediction, and the constant panics only with another message.

use super::names::private;
use crate::ir::{Kernel, KernelParamKind, Plan};
use crate::signatures::Built;
use crate::syntax::SliceAccess;
use crate::text::text;
use memplan_model::declaration::{self, Access, Declared, DeclaredParam, RustType};
use memplan_model::{ExtentTerm, ParamLayout, RustScalar};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Type};

/// The constant describing kernel `index`'s declaration, inside the plan's
/// `const _` block.
fn declared(index: usize) -> Ident {
    format_ident!("__MEMPLAN_KERNEL_{}", index)
}

/// The constant holding the image kernel `index`'s declaration names: the
/// path as written, at its own spans (a `$crate` in it resolves by its
/// span), once, so that a path that names nothing is one error, at it.
fn image(index: usize) -> Ident {
    format_ident!("__MEMPLAN_IMAGE_{}", index)
}

/// The kernels' declarations and their checks, for the plan's `const _`
/// block; and each kernel's compiled code, for its `PlanInfo`.
pub fn lower(plan: &Plan, built: Option<&Built>) -> (TokenStream, Vec<TokenStream>) {
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
    (checks(plan, built), code)
}

/// The declarations and their checks. An `unsafe kernel` is the user's
/// promise instead: an `unsafe` block with their `unsafe` token, so that a
/// crate that forbids `unsafe_code` cannot make it.
fn checks(plan: &Plan, built: Option<&Built>) -> TokenStream {
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
            let path = &plan.modules[kernel.module];
            let module = image(index);
            let value = declaration(plan, kernel);
            // The error points at the declaration's name.
            let predicted = built.and_then(|built| predicted(plan, kernel, built));
            // The constant panics with the check's message, but for the
            // one predicted and worded below.
            let reported = predicted.as_ref().map(|message| {
                quote!(::core::result::Result::Err(message) if #private::str_eq(message.as_str(), #message) => (),)
            });
            let check = quote! {
                const _: () = match #private::check_kernel(#module, &#name) {
                    ::core::result::Result::Ok(_) => (),
                    #reported
                    ::core::result::Result::Err(message) => ::core::panic!("{}", message.as_str()),
                };
            };
            let worded = predicted.map(|message| {
                // `{` and `}` are the attribute's placeholders.
                let shown = message.replace('{', "{{").replace('}', "}}");
                quote! {
                    const _: () = {
                        #[diagnostic::on_unimplemented(
                            message = #shown,
                            label = "does not match its C++ kernel"
                        )]
                        trait DeclarationMatchesItsCpp {
                            const HOLDS: () = ();
                        }
                        #[diagnostic::do_not_recommend]
                        impl DeclarationMatchesItsCpp for #private::Verdict<true> {}
                        <#private::Verdict<{ !#private::fails_with(#module, &#name, #message) }>
                            as DeclarationMatchesItsCpp>::HOLDS
                    };
                }
            });
            // Both errors at the declaration's name: rustc reports each
            // at the span of tokens that are ours, and would otherwise
            // point at the whole macro. Every token here is the macro's:
            // the user's path is in `#module`, at its own spans.
            let check = respanned(quote!(#check #worded), kernel.name.span());
            quote! {
                const #name: #private::Declared = #value;
                const #module: &#private::Image = &#path;
                #check
            }
        }
    });
    quote!(#(#items)*)
}

/// The message the check gives `kernel`'s declaration if its path's last
/// name is the image of that name this crate built; `None` where the
/// declaration matches it, or a type is not a primitive the macro can lay
/// out (the check reads other types from their `KernelValue` impls).
fn predicted(plan: &Plan, kernel: &Kernel, built: &Built) -> Option<String> {
    let path = &plan.modules[kernel.module];
    let image = built.image(&path.segments.last()?.ident.to_string())?;
    let written = Written::of(plan, kernel);
    let types = written
        .params
        .iter()
        .map(|param| predicted_type(param.ty))
        .collect::<Option<Vec<_>>>()?;
    let params: Vec<DeclaredParam> = written
        .params
        .iter()
        .zip(types)
        .map(|(param, ty)| match &param.buffer {
            Some(buffer) => DeclaredParam::Buffer {
                name: &param.name,
                elem: ty,
                access: buffer.access,
                extent: buffer.extent.as_deref(),
                elem_spelled: &buffer.elem_spelled,
                ty: &param.spelled,
            },
            None => DeclaredParam::Value {
                name: &param.name,
                value: ty,
                ty: &param.spelled,
            },
        })
        .collect();
    let names: Vec<&str> = written
        .params
        .iter()
        .map(|param| param.name.as_str())
        .collect();
    let declared = Declared {
        name: &written.name,
        rust_name: &written.rust_name,
        module: &written.module,
        params: &params,
        names: &names,
    };
    declaration::check(Some(image), &declared)
        .err()
        .map(|message| message.as_str().to_owned())
}

/// A type as the check would read it from its `KernelValue` impl, where
/// its spelling says: a primitive written as its name (`f32`), as Rust
/// lays it out on this machine, or one of memplan's CUDA vector types by
/// its last name (`memplan::Float4`); `None` for any other type. A
/// spelling that says wrong (a type of the user's named `Float4`) costs
/// only the wording: rustc decides.
fn predicted_type(ty: &Type) -> Option<RustType> {
    let Type::Path(path) = ty else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    if let Some((cpp, size)) = vector(&path.path) {
        return Some(RustType {
            scalar: RustScalar::Named { cpp: Some(cpp) },
            layout: ParamLayout { size, align: size },
        });
    }
    let scalar = match path.path.get_ident()?.to_string().as_str() {
        "bool" => RustScalar::Bool,
        "i8" => RustScalar::I8,
        "u8" => RustScalar::U8,
        "i16" => RustScalar::I16,
        "u16" => RustScalar::U16,
        "i32" => RustScalar::I32,
        "u32" => RustScalar::U32,
        "i64" => RustScalar::I64,
        "u64" => RustScalar::U64,
        "isize" => RustScalar::Isize,
        "usize" => RustScalar::Usize,
        "f32" => RustScalar::F32,
        "f64" => RustScalar::F64,
        _ => return None,
    };
    RustType::primitive(scalar)
}

/// memplan's CUDA vector types (the runtime's `vector.rs`): the C++ class
/// each names, and its size, which is its alignment.
fn vector(path: &syn::Path) -> Option<(&'static str, usize)> {
    let last = path.segments.last()?;
    if !last.arguments.is_none() {
        return None;
    }
    Some(match last.ident.to_string().as_str() {
        "Float2" => ("float2", 8),
        "Float4" => ("float4", 16),
        "Double2" => ("double2", 16),
        "Int2" => ("int2", 8),
        "Int4" => ("int4", 16),
        "UInt2" => ("uint2", 8),
        "UInt4" => ("uint4", 16),
        _ => return None,
    })
}

fn access_of(access: &SliceAccess) -> Access {
    match access {
        SliceAccess::Read => Access::Read,
        SliceAccess::ReadWrite => Access::ReadWrite,
        SliceAccess::Write => Access::Write,
        SliceAccess::Atomic => Access::Atomic,
    }
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
    let written = Written::of(plan, kernel);
    let (name, rust_name, module) = (&written.name, &written.rust_name, &written.module);
    let names = written.params.iter().map(|param| &param.name);
    let params = written.params.iter().map(|param| {
        let (name, spelled) = (&param.name, &param.spelled);
        let ty = rust_type(param.ty);
        match &param.buffer {
            Some(buffer) => {
                let access = variant(&buffer.access);
                let elem_spelled = &buffer.elem_spelled;
                let extent = match &buffer.extent {
                    Some(terms) => {
                        let terms = terms.iter().map(term_tokens);
                        quote!(::core::option::Option::Some(&[#(#private::ExtentTerm::#terms),*]))
                    }
                    None => quote!(::core::option::Option::None),
                };
                quote!(#private::DeclaredParam::Buffer {
                    name: #name,
                    elem: #ty,
                    access: #private::Access::#access,
                    extent: #extent,
                    elem_spelled: #elem_spelled,
                    ty: #spelled,
                })
            }
            None => {
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

/// A declaration as written: what both of its forms are made of, the
/// constant rustc checks ([`declaration`]) and the value the macro
/// predicts its message with ([`predicted`]), which differ only in how a
/// type is known.
struct Written<'k> {
    /// The C++ name looked up.
    name: String,
    rust_name: String,
    /// The module's path as written.
    module: String,
    params: Vec<WrittenParam<'k>>,
}

struct WrittenParam<'k> {
    name: String,
    /// The whole type as written.
    spelled: String,
    /// A value's type, or a buffer's element type.
    ty: &'k Type,
    buffer: Option<WrittenBuffer>,
}

struct WrittenBuffer {
    access: Access,
    /// `None` for an extent `extent::check_declaration` refused.
    extent: Option<Vec<ExtentTerm>>,
    elem_spelled: String,
}

impl<'k> Written<'k> {
    fn of(plan: &Plan, kernel: &'k Kernel) -> Written<'k> {
        let params = kernel.params.iter().map(|param| {
            let (ty, buffer) = match &param.kind {
                KernelParamKind::Slice {
                    access,
                    elem,
                    extent,
                } => (
                    elem,
                    Some(WrittenBuffer {
                        access: access_of(access),
                        extent: extent.as_ref().and_then(|e| extent_values(e, kernel)),
                        elem_spelled: text(elem),
                    }),
                ),
                KernelParamKind::Value(ty) => (ty, None),
            };
            WrittenParam {
                name: param.name.to_string(),
                spelled: param.spelled(),
                ty,
                buffer,
            }
        });
        Written {
            name: cpp_name(kernel),
            rust_name: kernel.name.to_string(),
            module: text(&plan.modules[kernel.module]),
            params: params.collect(),
        }
    }
}

/// A declared type as the check knows it, read from the type's
/// `KernelValue` impl (never from its spelling). The type's tokens are the
/// user's, so rustc reports a type that is not a `KernelValue` at them.
fn rust_type(ty: &Type) -> TokenStream {
    let private = private();
    quote_spanned! {ty.span()=> #private::rust_type::<#ty>() }
}

/// An extent as `ExtentTerm`s in postfix order, each parameter by its
/// position; `None` for one `extent::check_declaration` refused.
fn extent_values(extent: &Expr, kernel: &Kernel) -> Option<Vec<ExtentTerm>> {
    let terms = postfix(extent, kernel).ok()?;
    Some(
        terms
            .into_iter()
            .map(|term| match term {
                Term::Param(position) => ExtentTerm::Param(position),
                Term::Literal(value) => ExtentTerm::Literal(value),
                Term::Op(op) => match op {
                    memplan_model::Term::Add => ExtentTerm::Add,
                    memplan_model::Term::Sub => ExtentTerm::Sub,
                    memplan_model::Term::Mul => ExtentTerm::Mul,
                    memplan_model::Term::Div => ExtentTerm::Div,
                    _ => ExtentTerm::Rem,
                },
            })
            .collect(),
    )
}

/// An `ExtentTerm`'s variant, for `ExtentTerm::#variant`.
fn term_tokens(term: &ExtentTerm) -> TokenStream {
    match *term {
        ExtentTerm::Param(position) => {
            let position = Literal::u16_unsuffixed(position);
            quote!(Param(#position))
        }
        ExtentTerm::Literal(value) => {
            let value = Literal::u64_unsuffixed(value);
            quote!(Literal(#value))
        }
        other => variant(&other).into_token_stream(),
    }
}

/// `tokens`, each at `span`.
fn respanned(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner = Group::new(group.delimiter(), respanned(group.stream(), span));
                inner.set_span(span);
                return TokenTree::Group(inner);
            }
            token.set_span(span);
            token
        })
        .collect()
}

/// A fieldless variant's name, as its `Debug` writes it.
fn variant(value: &impl std::fmt::Debug) -> Ident {
    Ident::new(&format!("{value:?}"), proc_macro2::Span::call_site())
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

#[cfg(test)]
mod tests {
    use super::super::tests::checked;
    use super::*;

    /// `vadd`, as memplan-build writes the image `VECTOR_ADD`.
    const BUILT: &str = r#"[("VECTOR_ADD", &[::memplan::KernelSignature { symbol: "vadd", name: "vadd", params: Some(&[::memplan::CParam::Pointer { pointee: ::memplan::CScalar::F32, konst: true }, ::memplan::CParam::Pointer { pointee: ::memplan::CScalar::F32, konst: false }, ::memplan::CParam::Value(::memplan::CScalar::I32)]), contracts: &[Some(::memplan::Contract { access: ::memplan::ContractAccess::Reads, extent: "n", program: &[::memplan::ExtentTerm::Param(2)] }), Some(::memplan::Contract { access: ::memplan::ContractAccess::Writes, extent: "n", program: &[::memplan::ExtentTerm::Param(2)] }), None], cpp: "extern \"C\" __global__ void vadd(MEMPLAN_READS(n) const float *a, MEMPLAN_WRITES(n) float *c, int n)", waits_first: ::memplan::WaitsFirst { machine_code: &[], ptx: &[] } }]),
        ("CLASSES", &[::memplan::KernelSignature { symbol: "shift4", name: "shift4", params: Some(&[::memplan::CParam::Pointer { pointee: ::memplan::CScalar::Named { name: "float4", size: 16, align: 16 }, konst: false }, ::memplan::CParam::Value(::memplan::CScalar::I32)]), contracts: &[Some(::memplan::Contract { access: ::memplan::ContractAccess::Updates, extent: "n", program: &[::memplan::ExtentTerm::Param(1)] }), None], cpp: "extern \"C\" __global__ void shift4(MEMPLAN_UPDATES(n) float4 *v, int n)", waits_first: ::memplan::WaitsFirst { machine_code: &[], ptx: &[] } }])]"#;

    /// The checks of a plan declaring `declaration`, lowered with `BUILT`.
    fn checks_of(declaration: &str) -> String {
        // `a` holds the element type the declaration gives it.
        let elem = if declaration.contains("Real") {
            "Real"
        } else {
            "f32"
        };
        let text = format!(
            "plan P(n: usize) {{
                {declaration}
                device a: [{elem}; n], c: [f32; n];
                fill a with 1.0;
                fill c with 0.0;
                launch vadd<<<1, 1>>>(a, c, n as i32);
            }}"
        );
        let (plan, _) = checked(&text);
        let built = Built::parse(&memplan_model::signatures_file::seal(BUILT)).unwrap();
        lower(&plan, Some(&built)).0.to_string()
    }

    #[test]
    fn a_mismatch_the_macro_can_predict_is_worded_as_an_ordinary_error() {
        let code = checks_of(
            "kernel vadd(a: &[f32; n], c: &mut [f32; n], n: i32) from kernels::VECTOR_ADD;",
        );
        let message = "parameter `c` is not `&out` in the declaration";
        assert!(code.contains("on_unimplemented"), "{code}");
        assert!(code.contains(message), "{code}");
        // Confirmed against the image the path names (written once, at
        // its own spans), and the constant panics with any other message.
        assert!(
            code.contains(
                "const __MEMPLAN_IMAGE_0 : & __memplan :: Image = & kernels :: VECTOR_ADD ;"
            ),
            "{code}"
        );
        assert_eq!(code.matches("kernels :: VECTOR_ADD").count(), 1, "{code}");
        assert!(code.contains("fails_with (__MEMPLAN_IMAGE_0 ,"), "{code}");
        assert!(code.contains("str_eq (message . as_str ()"), "{code}");
        assert!(code.contains(":: core :: panic !"), "{code}");
    }

    #[test]
    fn memplans_vector_types_are_known_by_their_name() {
        let plan = |declaration: &str, elem: &str| {
            let text = format!(
                "plan P(n: usize) {{
                    {declaration}
                    device v: [{elem}; n];
                    fill v with {elem}::default();
                    launch shift4<<<1, 1>>>(v, n as i32);
                }}"
            );
            let (plan, _) = checked(&text);
            let built = Built::parse(&memplan_model::signatures_file::seal(BUILT)).unwrap();
            lower(&plan, Some(&built)).0.to_string()
        };
        let right = plan(
            "kernel shift4(v: &mut [memplan::Float4; n], n: i32) from CLASSES;",
            "memplan::Float4",
        );
        assert!(!right.contains("on_unimplemented"), "{right}");
        let code = plan(
            "kernel shift4(v: &mut [memplan::Float2; n], n: i32) from CLASSES;",
            "memplan::Float2",
        );
        assert!(
            code.contains("has a Rust type whose `CPP_NAME` names another C++ class"),
            "{code}"
        );
    }

    #[test]
    fn nothing_is_predicted_where_the_macro_cannot_tell() {
        let cases = [
            // It matches.
            "kernel vadd(a: &[f32; n], c: &out [f32; n], n: i32) from VECTOR_ADD;",
            // Another image's name.
            "kernel vadd(a: &[f32; n], c: &mut [f32; n], n: i32) from SAXPY;",
            // A type the macro cannot lay out: its impl decides.
            "kernel vadd(a: &[Real; n], c: &mut [f32; n], n: i32) from VECTOR_ADD;",
        ];
        for declaration in cases {
            let code = checks_of(declaration);
            assert!(!code.contains("on_unimplemented"), "{declaration}: {code}");
            assert!(code.contains(":: core :: panic !"), "{code}");
        }
    }
}
