//! The signatures of the kernels the crate being compiled built: the file
//! `memplan-build` writes beside the images (`memplan_kernels.signatures`
//! in `OUT_DIR`), read so that a `kernel` declaration that does not match
//! its C++ gets an ordinary error rather than a constant's panic.
//!
//! Nothing here is trusted. A path such as `kernels::BLUR` may name
//! another image than this crate's `BLUR`, and the file may be stale or
//! unreadable; the macro only *predicts* the check's message from it, and
//! rustc confirms the prediction against the image the path names (the
//! runtime's `declaration.rs`). A wrong prediction costs only the wording.
//!
//! The file is read only under memplan-build's seal
//! ([`memplan_model::signatures_file`]): text that is not valid tokens
//! would be rustc's lexer error at the macro's call.

use memplan_model::signatures_file::{FILE, unsealed};
use memplan_model::{
    CParam, CScalar, Contract, ContractAccess, ExtentTerm, KernelSignature, WaitsFirst,
};
use std::sync::Mutex;
use syn::{Expr, Lit};

/// The images a build listed, each with its kernels' signatures.
#[derive(Debug)]
pub struct Built {
    images: Vec<(String, &'static [KernelSignature])>,
}

impl Built {
    /// The signatures of the crate being compiled, if its build step wrote
    /// them (`OUT_DIR` is set for crates with a build script). Read at
    /// each expansion: a crate whose kernels change is rebuilt, and its
    /// plans expanded again.
    pub fn of_this_crate() -> Option<&'static Built> {
        let dir = std::env::var_os("OUT_DIR")?;
        let text = std::fs::read_to_string(std::path::Path::new(&dir).join(FILE)).ok()?;
        remembered(text)
    }

    /// The file's text as signatures; `None` where it is not memplan-build's
    /// (its seal does not hold), or not in the form it writes.
    pub fn parse(text: &str) -> Option<Built> {
        let body = unsealed(text)?;
        let Expr::Array(list) = syn::parse_str::<Expr>(body).ok()? else {
            return None;
        };
        let mut images = Vec::new();
        for entry in &list.elems {
            let Expr::Tuple(pair) = entry else {
                return None;
            };
            if pair.elems.len() != 2 {
                return None;
            }
            let [name, kernels] = [&pair.elems[0], &pair.elems[1]];
            let kernels = slice(kernels)?
                .into_iter()
                .map(signature)
                .collect::<Option<Vec<_>>>()?;
            images.push((string(name)?, leak(kernels)));
        }
        Some(Built { images })
    }

    /// The signatures of the image named `name` (`BLUR`), if it was built.
    pub fn image(&self, name: &str) -> Option<&'static [KernelSignature]> {
        let mut found = self.images.iter().filter(|(image, _)| image == name);
        match (found.next(), found.next()) {
            (Some((_, kernels)), None) => Some(kernels),
            _ => None,
        }
    }
}

/// The signatures of `text`, parsed once per text (known by its hash; a
/// text that is not signatures is remembered as such). The signatures are
/// `'static`, as the check takes them: each distinct file is kept for the
/// life of the compiler, or of rust-analyzer's macro server, where a
/// crate's kernels changing adds one file's signatures (a few kilobytes).
fn remembered(text: String) -> Option<&'static Built> {
    static SEEN: Mutex<Vec<(u64, Option<&'static Built>)>> = Mutex::new(Vec::new());
    let key = {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        text.hash(&mut hasher);
        hasher.finish()
    };
    let mut seen = SEEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, built)) = seen.iter().find(|(seen, _)| *seen == key) {
        return *built;
    }
    let built = Built::parse(&text).map(|built| &*Box::leak(Box::new(built)));
    seen.push((key, built));
    built
}

fn leak<T>(items: Vec<T>) -> &'static [T] {
    Box::leak(items.into_boxed_slice())
}

fn leak_str(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// `KernelSignature { symbol, name, params, contracts, cpp }`.
fn signature(expr: &Expr) -> Option<KernelSignature> {
    let fields = fields(expr, "KernelSignature")?;
    let params = match field(&fields, "params")? {
        Expr::Path(none) if none.path.is_ident("None") => None,
        some => {
            let params = slice(option(some)?)?;
            Some(leak(
                params.into_iter().map(param).collect::<Option<Vec<_>>>()?,
            ))
        }
    };
    let contracts = slice(field(&fields, "contracts")?)?
        .into_iter()
        .map(|contract| match contract {
            Expr::Path(none) if none.path.is_ident("None") => Some(None),
            some => self::contract(option(some)?).map(Some),
        })
        .collect::<Option<Vec<_>>>()?;
    Some(KernelSignature {
        symbol: leak_str(string(field(&fields, "symbol")?)?),
        name: leak_str(string(field(&fields, "name")?)?),
        params,
        contracts: leak(contracts),
        cpp: leak_str(string(field(&fields, "cpp")?)?),
        waits_first: waits_first(field(&fields, "waits_first")?)?,
    })
}

/// `WaitsFirst { machine_code: &[(90, true)], ptx: &[(90, true)] }`: the
/// runtime alone reads it, and it is read back whole so that the file
/// says what the images hold.
fn waits_first(expr: &Expr) -> Option<WaitsFirst> {
    let fields = fields(expr, "WaitsFirst")?;
    let forms = |name: &str| -> Option<&'static [(u32, bool)]> {
        let forms = slice(field(&fields, name)?)?
            .into_iter()
            .map(|form| {
                let Expr::Tuple(pair) = form else {
                    return None;
                };
                match (pair.elems.first()?, pair.elems.get(1)?, pair.elems.len()) {
                    (arch, Expr::Lit(waits), 2) => match &waits.lit {
                        Lit::Bool(waits) => Some((integer(arch)?, waits.value)),
                        _ => None,
                    },
                    _ => None,
                }
            })
            .collect::<Option<Vec<_>>>()?;
        Some(leak(forms))
    };
    Some(WaitsFirst {
        machine_code: forms("machine_code")?,
        ptx: forms("ptx")?,
    })
}

/// `CParam::Pointer { pointee, konst }`, `CParam::Value(s)`,
/// `CParam::Other("...")`.
fn param(expr: &Expr) -> Option<CParam> {
    if let Some(fields) = fields(expr, "Pointer") {
        let konst = match field(&fields, "konst")? {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Bool(konst) => konst.value,
                _ => return None,
            },
            _ => return None,
        };
        return Some(CParam::Pointer {
            pointee: scalar(field(&fields, "pointee")?)?,
            konst,
        });
    }
    let (variant, argument) = call(expr)?;
    match variant.as_str() {
        "Value" => Some(CParam::Value(scalar(argument)?)),
        "Other" => Some(CParam::Other(leak_str(string(argument)?))),
        _ => None,
    }
}

/// `CScalar::F32`, `CScalar::Named { name, size, align }`,
/// `CScalar::Other("...")`.
fn scalar(expr: &Expr) -> Option<CScalar> {
    if let Some(fields) = fields(expr, "Named") {
        return Some(CScalar::Named {
            name: leak_str(string(field(&fields, "name")?)?),
            size: integer(field(&fields, "size")?)?,
            align: integer(field(&fields, "align")?)?,
        });
    }
    if let Some((variant, argument)) = call(expr) {
        return match variant.as_str() {
            "Other" => Some(CScalar::Other(leak_str(string(argument)?))),
            _ => None,
        };
    }
    Some(match variant(expr)?.as_str() {
        "Bool" => CScalar::Bool,
        "I8" => CScalar::I8,
        "U8" => CScalar::U8,
        "I16" => CScalar::I16,
        "U16" => CScalar::U16,
        "I32" => CScalar::I32,
        "U32" => CScalar::U32,
        "I64" => CScalar::I64,
        "U64" => CScalar::U64,
        "F32" => CScalar::F32,
        "F64" => CScalar::F64,
        _ => return None,
    })
}

/// `Contract { access, extent, program }`.
fn contract(expr: &Expr) -> Option<Contract> {
    let fields = fields(expr, "Contract")?;
    let access = match variant(field(&fields, "access")?)?.as_str() {
        "Reads" => ContractAccess::Reads,
        "Writes" => ContractAccess::Writes,
        "Updates" => ContractAccess::Updates,
        "Atomic" => ContractAccess::Atomic,
        _ => return None,
    };
    let program = slice(field(&fields, "program")?)?
        .into_iter()
        .map(term)
        .collect::<Option<Vec<_>>>()?;
    Some(Contract {
        access,
        extent: leak_str(string(field(&fields, "extent")?)?),
        program: leak(program),
    })
}

/// `ExtentTerm::Param(i)`, `ExtentTerm::Literal(v)`, `ExtentTerm::Add`, ...
fn term(expr: &Expr) -> Option<ExtentTerm> {
    if let Some((variant, argument)) = call(expr) {
        return match variant.as_str() {
            "Param" => Some(ExtentTerm::Param(integer(argument)?)),
            "Literal" => Some(ExtentTerm::Literal(integer(argument)?)),
            _ => None,
        };
    }
    Some(match variant(expr)?.as_str() {
        "Add" => ExtentTerm::Add,
        "Sub" => ExtentTerm::Sub,
        "Mul" => ExtentTerm::Mul,
        "Div" => ExtentTerm::Div,
        "Rem" => ExtentTerm::Rem,
        _ => return None,
    })
}

/// The fields of a struct expression whose path ends in `name`.
fn fields<'e>(expr: &'e Expr, name: &str) -> Option<Vec<(String, &'e Expr)>> {
    let Expr::Struct(value) = expr else {
        return None;
    };
    if value.path.segments.last()?.ident != name {
        return None;
    }
    value
        .fields
        .iter()
        .map(|field| match &field.member {
            syn::Member::Named(ident) => Some((ident.to_string(), &field.expr)),
            syn::Member::Unnamed(_) => None,
        })
        .collect()
}

fn field<'e>(fields: &[(String, &'e Expr)], name: &str) -> Option<&'e Expr> {
    fields
        .iter()
        .find(|(field, _)| field == name)
        .map(|(_, expr)| *expr)
}

/// The last segment of a path expression: a variant without fields.
fn variant(expr: &Expr) -> Option<String> {
    let Expr::Path(path) = expr else {
        return None;
    };
    Some(path.path.segments.last()?.ident.to_string())
}

/// `Variant(argument)`, a variant with one field.
fn call(expr: &Expr) -> Option<(String, &Expr)> {
    let Expr::Call(call) = expr else {
        return None;
    };
    match (variant(&call.func), call.args.len()) {
        (Some(variant), 1) => Some((variant, call.args.first()?)),
        _ => None,
    }
}

/// `Some(x)`'s `x`.
fn option(expr: &Expr) -> Option<&Expr> {
    match call(expr)? {
        (some, inner) if some == "Some" => Some(inner),
        _ => None,
    }
}

/// `&[a, b]`'s elements.
fn slice(expr: &Expr) -> Option<Vec<&Expr>> {
    let Expr::Reference(reference) = expr else {
        return None;
    };
    let Expr::Array(array) = &*reference.expr else {
        return None;
    };
    Some(array.elems.iter().collect())
}

fn string(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Str(text) => Some(text.value()),
            _ => None,
        },
        _ => None,
    }
}

fn integer<N: std::str::FromStr>(expr: &Expr) -> Option<N>
where
    N::Err: std::fmt::Display,
{
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(int) => int.base10_parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplan_model::signatures_file::seal as sealed;

    /// As `memplan-build` writes it (its runtime path included).
    const WRITTEN: &str = r#"// Written by memplan-build.
[
("ADD_ONE", &[::memplan::KernelSignature { symbol: "process_data", name: "process_data", params: Some(&[::memplan::CParam::Pointer { pointee: ::memplan::CScalar::F32, konst: false }, ::memplan::CParam::Value(::memplan::CScalar::I32)]), contracts: &[Some(::memplan::Contract { access: ::memplan::ContractAccess::Updates, extent: "n * 2", program: &[::memplan::ExtentTerm::Param(1), ::memplan::ExtentTerm::Literal(2), ::memplan::ExtentTerm::Mul] }), None], cpp: "extern \"C\" __global__ void process_data(MEMPLAN_UPDATES(n * 2) float *data, int n)", waits_first: ::memplan::WaitsFirst { machine_code: &[(80, false), (90, true)], ptx: &[(90, true)] } }]),
("CLASSES", &[::memplan::KernelSignature { symbol: "_Z1fP6float4", name: "f", params: Some(&[::memplan::CParam::Pointer { pointee: ::memplan::CScalar::Named { name: "float4", size: 16, align: 16 }, konst: true }, ::memplan::CParam::Other("float **")]), contracts: &[], cpp: "__global__ void f(const float4 *, float **)", waits_first: ::memplan::WaitsFirst { machine_code: &[], ptx: &[] } },
    ::memplan::KernelSignature { symbol: "g", name: "g", params: None, contracts: &[], cpp: "a type memplan-build cannot read", waits_first: ::memplan::WaitsFirst { machine_code: &[], ptx: &[] } }]),
]
"#;

    #[test]
    fn what_memplan_build_writes_is_read_back() {
        let built = Built::parse(&sealed(WRITTEN)).unwrap();
        let add_one = built.image("ADD_ONE").unwrap();
        assert_eq!(add_one.len(), 1);
        assert_eq!(add_one[0].name, "process_data");
        assert_eq!(
            add_one[0].params.unwrap(),
            [
                CParam::Pointer {
                    pointee: CScalar::F32,
                    konst: false
                },
                CParam::Value(CScalar::I32)
            ]
        );
        assert_eq!(
            add_one[0].contracts,
            [
                Some(Contract {
                    access: ContractAccess::Updates,
                    extent: "n * 2",
                    program: &[
                        ExtentTerm::Param(1),
                        ExtentTerm::Literal(2),
                        ExtentTerm::Mul
                    ],
                }),
                None
            ]
        );
        assert!(add_one[0].cpp.starts_with("extern \"C\" __global__"));
        assert_eq!(
            add_one[0].waits_first,
            WaitsFirst {
                machine_code: &[(80, false), (90, true)],
                ptx: &[(90, true)],
            }
        );
        let classes = built.image("CLASSES").unwrap();
        assert_eq!(
            classes[0].params.unwrap(),
            [
                CParam::Pointer {
                    pointee: CScalar::Named {
                        name: "float4",
                        size: 16,
                        align: 16
                    },
                    konst: true
                },
                CParam::Other("float **")
            ]
        );
        assert_eq!(classes[1].params, None);
        assert!(built.image("BLUR").is_none());
    }

    #[test]
    fn anything_else_is_no_signatures() {
        let parse = |body: &str| Built::parse(&sealed(body));
        assert!(parse("").is_none());
        assert!(parse("[(\"A\", &[::memplan::KernelSignature { symbol: 1 }])]").is_none());
        assert!(
            parse("[(\"A\", &[]), (\"A\", &[])]")
                .unwrap()
                .image("A")
                .is_none()
        );
        assert!(parse("[").is_none());
        assert!(parse("[]").unwrap().image("A").is_none());
        // Unsealed, or sealed for other text: not read, whatever it holds
        // (rustc's lexer would report text that is no tokens).
        assert!(Built::parse(WRITTEN).is_none());
        assert!(Built::parse(&sealed(WRITTEN).replace("ADD_ONE", "ADD_TWO")).is_none());
        assert!(Built::parse(&sealed("[(\"A\", &[]), 1e]")[1..]).is_none());
    }
}
