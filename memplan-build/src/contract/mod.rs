//! Kernel contracts: what `memplan.cuh`'s `MEMPLAN_READS(n)` and its kin
//! say about a kernel's pointer parameters, read back from nvcc.
//!
//! Under memplan-build the macros become `annotate` attributes, which nvcc's
//! front end keeps on the parameters when it prints its host code (`nvcc
//! -cuda`): each kernel's declaration again, in its own spelling, in its
//! namespaces, with the attribute on the parameter it was written before
//! and with the parameters' names ([`scan`]). A registered kernel takes
//! the contracts of the declarations of its qualified name and parameter
//! count; where overloads of that name cannot be told apart it takes none
//! (and the build says why), and a template's instance takes its
//! template's unless it is specialized. The contracts are then checked
//! against the parameter types the mangled name gives: a contract sits on
//! a pointer, what the kernel writes is not `const`, and an extent names
//! integer parameters of the same kernel. [`agree`] checks that every
//! compilation of the source (the host's, each GPU architecture's) reads
//! the same contracts.

pub mod agree;
mod extent;
mod scan;

use crate::demangle::{Builtin, CType, Function};
use extent::parse_extent;
use scan::{Declaration, Kind};

/// What a kernel does with the elements of a pointer parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Reads,
    Writes,
    Updates,
    Atomic,
}

impl Access {
    fn from_word(word: &str) -> Option<Access> {
        Some(match word {
            "reads" => Access::Reads,
            "writes" => Access::Writes,
            "updates" => Access::Updates,
            "atomic" => Access::Atomic,
            _ => return None,
        })
    }

    /// The macro that states it, for messages.
    pub fn macro_name(self) -> &'static str {
        match self {
            Access::Reads => "MEMPLAN_READS",
            Access::Writes => "MEMPLAN_WRITES",
            Access::Updates => "MEMPLAN_UPDATES",
            Access::Atomic => "MEMPLAN_ATOMIC",
        }
    }

    /// The runtime's variant name.
    pub fn variant(self) -> &'static str {
        match self {
            Access::Reads => "Reads",
            Access::Writes => "Writes",
            Access::Updates => "Updates",
            Access::Atomic => "Atomic",
        }
    }
}

/// One step of an extent, in postfix order on a stack; parameters by
/// position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    Param(usize),
    Literal(u64),
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// A pointer parameter's contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contract {
    pub access: Access,
    /// The extent as nvcc's preprocessor wrote it (macros expanded).
    pub text: String,
    pub program: Vec<Term>,
}

/// A kernel's contracts, from the declarations that state them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelContracts {
    /// The parameters' names (`__T0` for an unnamed one).
    pub names: Vec<String>,
    /// Each parameter's contract, if it has one.
    pub params: Vec<Option<Contract>>,
}

/// What a kernel's lookup found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Its source states no contract for it.
    None,
    Found(KernelContracts),
    /// Contracts are stated, but which declaration is this kernel's cannot
    /// be told (why, for the build's warning): it takes none.
    Ambiguous(String),
}

/// The kernel declarations of a source, as nvcc printed them.
pub struct Contracts(Vec<Declaration>);

impl Contracts {
    /// Reads `host_code` (nvcc's `-cuda` output, line markers removed).
    pub fn read(host_code: &str) -> Contracts {
        Contracts(scan::declarations(host_code))
    }

    /// The contracts of `function`, a registered kernel (`extern "C"` or
    /// not), among the source's `registered` kernels (by name). An error is
    /// the build's: a contract that cannot be true of the kernel, or two
    /// declarations of it that state different ones.
    pub fn of(
        &self,
        function: &Function,
        extern_c: bool,
        registered: &[&str],
    ) -> Result<Lookup, String> {
        let arity = function.params.len();
        let (qualified, arguments) = function
            .name
            .split_at(function.name.find('<').unwrap_or(function.name.len()));
        let arguments: String = arguments.chars().filter(|c| !c.is_whitespace()).collect();
        let of_kind = |kind: Kind, name: &str| -> Vec<&Declaration> {
            self.0
                .iter()
                .filter(|d| d.kind == kind && d.params.len() == arity && same_name(name, &d.name))
                .collect()
        };
        let candidates: Vec<&Declaration> = if extern_c {
            // An `extern "C"` name is one function, whatever namespace
            // declares it.
            self.0
                .iter()
                .filter(|d| {
                    d.kind == Kind::Kernel
                        && d.extern_c
                        && d.params.len() == arity
                        && d.name.rsplit("::").next() == Some(function.name.as_str())
                })
                .collect()
        } else if arguments.is_empty() {
            of_kind(Kind::Kernel, qualified)
        } else {
            let specialized = of_kind(Kind::Specialization, &function.name);
            // A specialization no registered instance is spelled like may
            // be this instance, spelled otherwise (`unsigned` for
            // `unsigned int`): then the template's contracts may not be
            // its.
            let unplaced = self.0.iter().any(|d| {
                d.kind == Kind::Specialization
                    && d.params.len() == arity
                    && d.name.split('<').next() == Some(qualified)
                    && !registered.iter().any(|r| same_name(r, &d.name))
            });
            if !specialized.is_empty() {
                specialized
            } else if unplaced {
                return Ok(ambiguous_if_stated(
                    &self.0,
                    qualified,
                    format!(
                        "`{qualified}` has explicit specializations, and memplan cannot tell \
                         whether `{}` is one of them",
                        function.name
                    ),
                ));
            } else {
                let templates = of_kind(Kind::Template, qualified);
                // nvcc prints a template's definition once: two are two
                // templates (told apart by their template parameters),
                // and which one this instance is, the name does not say.
                if templates.len() > 1 {
                    return Ok(ambiguous_if_stated(
                        &self.0,
                        qualified,
                        format!(
                            "`{qualified}` names several kernel templates of {arity} \
                             parameters, and memplan cannot tell which `{}` is an instance of",
                            function.name
                        ),
                    ));
                }
                templates
            }
        };
        let stated = candidates
            .iter()
            .any(|d| d.params.iter().any(|p| p.has_marker()));
        if !stated {
            return Ok(Lookup::None);
        }
        let types = |d: &Declaration| d.params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>();
        let first = types(candidates[0]);
        if candidates.iter().any(|d| types(d) != first) {
            return Ok(Lookup::Ambiguous(format!(
                "`{}` has overloads of {arity} parameters, and memplan cannot tell which the \
                 compiled kernel is",
                function.name
            )));
        }
        merge(&candidates, function).map(Lookup::Found)
    }
}

/// Whether a registered kernel's demangled name and a printed one name the
/// same function: spaces aside, and without namespaces, which the
/// printed name has only where the scan found them.
fn same_name(registered: &str, printed: &str) -> bool {
    let squeeze = |name: &str| {
        name.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
    };
    squeeze(registered) == squeeze(printed)
}

/// `Ambiguous(why)` if any declaration named `qualified` (or an instance
/// of it) states a contract, else `None`.
fn ambiguous_if_stated(declarations: &[Declaration], qualified: &str, why: String) -> Lookup {
    let stated = declarations.iter().any(|d| {
        d.name.split('<').next() == Some(qualified) && d.params.iter().any(|p| p.has_marker())
    });
    if stated {
        Lookup::Ambiguous(why)
    } else {
        Lookup::None
    }
}

/// The contracts that `declarations` (of one function) state together:
/// each parameter's, from whichever declaration states it; two that
/// state different ones are an error.
fn merge(declarations: &[&Declaration], function: &Function) -> Result<KernelContracts, String> {
    let arity = function.params.len();
    let mut params: Vec<Option<Contract>> = vec![None; arity];
    let mut names: Vec<String> = declarations[0]
        .params
        .iter()
        .map(|p| p.name.clone())
        .collect();
    for declaration in declarations {
        let read = read_declaration(declaration, function)?;
        if read.iter().any(Option::is_some) {
            names = declaration.params.iter().map(|p| p.name.clone()).collect();
        }
        for (merged, contract) in params.iter_mut().zip(read) {
            match (&*merged, contract) {
                (Some(earlier), Some(contract)) if *earlier != contract => {
                    return Err(format!(
                        "`{}` is declared twice with different contracts: state one",
                        function.name
                    ));
                }
                (None, Some(contract)) => *merged = Some(contract),
                _ => {}
            }
        }
    }
    Ok(KernelContracts { names, params })
}

/// The contracts of one declaration, checked against the kernel's types.
fn read_declaration(
    declaration: &Declaration,
    function: &Function,
) -> Result<Vec<Option<Contract>>, String> {
    let kernel = &function.name;
    let names: Vec<&str> = declaration.params.iter().map(|p| p.name.as_str()).collect();
    let mut contracts = Vec::with_capacity(names.len());
    let stated = declaration.params.iter().any(|p| p.has_marker());
    if stated && declaration.params.iter().any(|p| p.name.is_empty()) {
        return Err(format!(
            "memplan cannot read the parameters of `{kernel}` as nvcc prints them, so not \
             which of them its contracts name\n\
             help: declare the kernel without default arguments or attributes in its \
             parameters, or leave its contracts out and declare it `unsafe kernel`"
        ));
    }
    for (param, ty) in declaration.params.iter().zip(&function.params) {
        let (word, text) = match &param.markers[..] {
            [] => {
                contracts.push(None);
                continue;
            }
            [marker] => marker,
            [..] => {
                return Err(format!(
                    "`{}` of `{kernel}` has {} contracts, and a parameter has one: say \
                     `MEMPLAN_UPDATES` for one that is read and written",
                    param.name,
                    param.markers.len()
                ));
            }
        };
        let access = Access::from_word(word).ok_or_else(|| {
            format!(
                "`{kernel}`: `{word}` on `{}` is not a contract memplan.cuh writes",
                param.name
            )
        })?;
        let what = format!(
            "`{}({text})` on `{}` of `{kernel}`",
            access.macro_name(),
            param.name
        );
        let konst = match ty {
            CType::Pointer(pointee) => {
                matches!(&**pointee, CType::Qualified { konst: true, .. })
            }
            other => {
                return Err(format!(
                    "{what}: `{}` is a `{other}`, and a contract is about the elements a pointer \
                     points to",
                    param.name
                ));
            }
        };
        if konst && access != Access::Reads {
            return Err(format!(
                "{what}: the kernel cannot write through a `{ty}`\n\
                 help: write `MEMPLAN_READS({text})`, or drop the `const` if the kernel writes"
            ));
        }
        let program = parse_extent(text, &names).map_err(|why| {
            format!(
                "{what}: {why}\nhelp: memplan reads an extent in the kernel's own parameters \
                 (not a template's); a kernel whose extents it cannot read is declared `unsafe \
                 kernel`, without a contract"
            )
        })?;
        for term in &program {
            if let Term::Param(index) = *term
                && !is_integer(&function.params[index])
            {
                return Err(format!(
                    "{what}: the extent names `{}`, a `{}`, and an extent counts elements \
                     with the kernel's integer parameters",
                    names[index], function.params[index]
                ));
            }
        }
        contracts.push(Some(Contract {
            access,
            text: text.clone(),
            program,
        }));
    }
    Ok(contracts)
}

fn is_integer(ty: &CType) -> bool {
    let ty = match ty {
        CType::Qualified { inner, .. } => &**inner,
        other => other,
    };
    matches!(
        ty,
        CType::Builtin(
            Builtin::Char
                | Builtin::SignedChar
                | Builtin::UnsignedChar
                | Builtin::Short
                | Builtin::UnsignedShort
                | Builtin::Int
                | Builtin::Unsigned
                | Builtin::Long
                | Builtin::UnsignedLong
                | Builtin::LongLong
                | Builtin::UnsignedLongLong
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demangle::demangle;

    fn lookup(code: &str, mangled: &str, name: &str, extern_c: bool) -> Result<Lookup, String> {
        let mut function = demangle(mangled).unwrap();
        function.name = name.to_owned();
        let registered = ["sc<double>", "sc<int>", name];
        Contracts::read(code).of(&function, extern_c, &registered)
    }

    fn found(lookup: Result<Lookup, String>) -> Vec<Option<(Access, String)>> {
        match lookup {
            Ok(Lookup::Found(found)) => found
                .params
                .into_iter()
                .map(|c| c.map(|c| (c.access, c.text)))
                .collect(),
            other => panic!("expected contracts, got {other:?}"),
        }
    }

    const CODE: &str = scan::tests::HOST_CODE;

    #[test]
    fn a_kernel_takes_the_contracts_of_its_own_qualified_name() {
        let a = found(lookup(CODE, "_ZN1a1kEPKfi", "a::k", false));
        assert_eq!(a, [Some((Access::Reads, "n".into())), None]);
        // `b::k` states none, though `a::k` does.
        assert_eq!(lookup(CODE, "_ZN1b1kEPfi", "b::k", false), Ok(Lookup::None));
        // A kernel named like a `__device__` function with a contract.
        assert_eq!(
            lookup(CODE, "_Z5touchPfi", "touch", false),
            Ok(Lookup::None)
        );
    }

    #[test]
    fn a_plain_kernel_never_takes_a_templates_contract() {
        assert_eq!(lookup(CODE, "_Z4fillPfi", "fill", false), Ok(Lookup::None));
        let instance = found(lookup(CODE, "_Z4fillIfEvPT_i", "fill<float>", false));
        assert_eq!(instance, [Some((Access::Writes, "n".into())), None]);
    }

    #[test]
    fn a_specialization_has_its_own_contract_or_none() {
        assert_eq!(
            lookup(CODE, "_Z2scIdEvPKT_PS0_i", "sc<double>", false),
            Ok(Lookup::None)
        );
        let int = found(lookup(CODE, "_Z2scIiEvPKT_PS0_i", "sc<int>", false));
        assert_eq!(int[0], Some((Access::Reads, "2 * n".into())));
        // Every specialization is another instance's: `sc<float>` is the
        // template's.
        let float = found(lookup(CODE, "_Z2scIfEvPKT_PS0_i", "sc<float>", false));
        assert_eq!(float[0], Some((Access::Reads, "n".into())));
        // A specialization no instance is spelled like may be this one.
        let mut function = demangle("_Z2scIfEvPKT_PS0_i").unwrap();
        function.name = "sc<float>".to_owned();
        assert!(matches!(
            Contracts::read(CODE).of(&function, false, &["sc<float>", "sc<int>"]),
            Ok(Lookup::Ambiguous(_))
        ));
    }

    #[test]
    fn extern_c_kernels_in_blocks_and_with_default_arguments() {
        let dflt = found(lookup(CODE, "_Z4dfltPfi", "dflt", true));
        assert_eq!(dflt[0], Some((Access::Writes, "n".into())));
        let inblock = found(lookup(CODE, "_Z7inblockPfi", "inblock", true));
        assert_eq!(inblock[0], Some((Access::Writes, "(n + 1) / 2".into())));
    }

    #[test]
    fn overloads_that_cannot_be_told_apart_take_none() {
        let code = r#"__attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:n" ))) const float *p, int n) ;
__attribute__((visibility("hidden"))) void k(float *p, int n) ;"#;
        assert!(matches!(
            lookup(code, "_Z1kPfi", "k", false),
            Ok(Lookup::Ambiguous(_))
        ));
    }

    #[test]
    fn a_prototype_and_a_definition_state_one_contract_between_them() {
        let code = r#"extern "C" __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:count" ))) const float * a, int count);
extern "C" __attribute__((visibility("hidden"))) void k(const float *a, int n) ;"#;
        let k = found(lookup(code, "_Z1kPKfi", "k", true));
        assert_eq!(k[0], Some((Access::Reads, "count".into())));
        let twice = r#"extern "C" __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:n" ))) const float * a, int n);
extern "C" __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:1" ))) const float *a, int n) ;"#;
        assert!(
            lookup(twice, "_Z1kPKfi", "k", true)
                .unwrap_err()
                .contains("declared twice with different contracts")
        );
    }

    #[test]
    fn contracts_that_cannot_be_true_are_build_errors() {
        let code = r#"__attribute__((visibility("hidden"))) void bad(__attribute((annotate("memplan:writes:n" ))) const float *a, int n) ;
__attribute__((visibility("hidden"))) void value(__attribute((annotate("memplan:reads:1" ))) int a, int n) ;
__attribute__((visibility("hidden"))) void names(__attribute((annotate("memplan:reads:m" ))) const float *a, int n) ;
__attribute__((visibility("hidden"))) void floats(__attribute((annotate("memplan:reads:x" ))) const float *a, float x) ;"#;
        let error = |mangled: &str, name: &str| lookup(code, mangled, name, false).unwrap_err();
        assert!(error("_Z3badPKfi", "bad").contains("cannot write through a `const float *`"));
        assert!(error("_Z5valueii", "value").contains("is a `int`"));
        assert!(error("_Z5namesPKfi", "names").contains("names `m`, which is not a parameter"));
        assert!(error("_Z6floatsPKff", "floats").contains("names `x`, a `float`"));
    }
}
