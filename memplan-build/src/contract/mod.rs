//! Kernel contracts: what `memplan.cuh`'s `MEMPLAN_READS(n)` and its kin
//! say about a kernel's pointer parameters, read back from nvcc.
//!
//! Under memplan-build the macros become `annotate` attributes, which nvcc's
//! front end keeps on the parameters when it prints its host code (`nvcc
//! -cuda`): each function's declarations again, in its own spelling, in
//! their namespaces, with the attribute on the parameter it was written
//! before and with the parameters' names ([`scan`]). A registered kernel
//! takes the contracts of its name's declarations only where they are
//! provably its own ([`Contracts::of`], and nvcc's word that the name is
//! one function, [`crate::probe`]); the contracts are then checked
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
use memplan_model::ExtentTerm;
use scan::Printed;

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

/// A pointer parameter's contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contract {
    pub access: Access,
    /// The extent as nvcc's preprocessor wrote it (macros expanded).
    pub text: String,
    /// The extent as the generated contract holds it: postfix, on a stack,
    /// parameters by position.
    pub program: Vec<ExtentTerm>,
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
    /// Contracts are stated, but which declarations are this kernel's
    /// cannot be told (why, for the build's warning): it takes none.
    Ambiguous(String),
}

/// The functions of a source, as nvcc printed them.
pub struct Contracts {
    printed: Vec<Printed>,
    /// The names that an explicit specialization (`template <> ...
    /// name<...>`) names somewhere in the source as any compilation
    /// preprocessed it, however nvcc prints it.
    specialized: Vec<String>,
}

impl Contracts {
    /// Reads `host_code` (nvcc's `-cuda` output, line markers removed) and
    /// `preprocessed` (the source after each compilation's preprocessor:
    /// a specialization only a GPU compilation sees is one too).
    pub fn read(host_code: &str, preprocessed: &[&str]) -> Contracts {
        let mut specialized: Vec<String> = preprocessed
            .iter()
            .flat_map(|text| agree::specialized(text))
            .collect();
        specialized.sort();
        specialized.dedup();
        Contracts {
            printed: scan::printed(host_code),
            specialized,
        }
    }

    /// The contracts of `function`, a registered kernel whose host stub is
    /// `stub` (its mangled name). An error is the build's: a contract that
    /// cannot be true of the kernel, or two declarations of it that state
    /// different ones.
    ///
    /// The kernel's anchor is what nvcc prints calling its stub: its host
    /// definition, or for a template's instance the wrapper of that
    /// instance. Its contracts are taken from the declarations of its name
    /// only where every function of that name in the file, in any
    /// namespace, whatever it is, is the one entity the anchor is (one
    /// kernel declared any number of times alike, or one kernel template
    /// and its instances): where the name is shared (an overload, another
    /// namespace's function, a specialization, a second template, a
    /// `__device__` function) it takes none, and the build says why, as it
    /// does where it finds no anchor. A declaration nvcc prints in a form
    /// this does not read is still one of the name, so it can only make
    /// the lookup take none.
    pub fn of(&self, function: &Function, stub: &str) -> Result<Lookup, String> {
        let anchors: Vec<&Printed> = self
            .printed
            .iter()
            .filter(|p| p.stub_call.as_deref() == Some(stub))
            .collect();
        // nvcc writes one; a second (a function of the source's that calls
        // the stub itself) leaves which is the kernel's unknown.
        let anchor = match anchors[..] {
            [anchor] => Some(anchor),
            _ => None,
        };
        let base = match anchor {
            Some(anchor) => anchor.base().to_owned(),
            None => {
                let name = function.name.split('<').next().unwrap_or(&function.name);
                name.rsplit("::").next().unwrap_or(name).to_owned()
            }
        };
        // The name's declarations: neither nvcc's wrappers, nor the host
        // definitions it writes calling stubs (printed otherwise, and one
        // for each kernel), nor instantiations, which declare nothing new.
        let family: Vec<&Printed> = self
            .printed
            .iter()
            .filter(|p| {
                p.base() == base && !p.instantiation && !is_wrapper(p) && p.stub_call.is_none()
            })
            .collect();
        if !family.iter().any(|p| p.has_marker()) {
            return Ok(Lookup::None);
        }
        let unclear = |why: &str| Ok(Lookup::Ambiguous(format!("`{}`: {why}", function.name)));
        let Some(anchor) = anchor else {
            return unclear(
                "memplan cannot find the kernel's own declaration among those nvcc prints",
            );
        };
        fn entity(p: &Printed) -> (&str, &str) {
            (p.name.as_str(), p.key.as_str())
        }
        let first = entity(family[0]);
        if family.iter().any(|p| entity(p) != first) {
            return unclear(
                "other functions in its file share its name (another namespace's, an \
                 overload, a specialization, a function that is no kernel), and memplan cannot \
                 tell which declarations are this kernel's",
            );
        }
        let (name, key) = first;
        if is_wrapper(anchor) {
            // A template's instance: the one printed entity must be a
            // template (not a specialization) of the anchor's name, never
            // specialized anywhere in its file, whose parameters read as
            // the names its call of its wrapper passes.
            let template = strip_arguments(&anchor.name).replace(scan::WRAPPER, "");
            if !key.starts_with("template<") || key.starts_with("template<>|") || name != template {
                return unclear("memplan cannot tell its template's declarations apart");
            }
            if self.specialized.contains(&base) {
                return unclear("its template is specialized in its file");
            }
            let names: Vec<&str> = family[0].params.iter().map(|p| p.name.as_str()).collect();
            let passed = family
                .iter()
                .filter_map(|p| p.wrapper_args.as_ref())
                .collect::<Vec<_>>();
            if passed.is_empty() || passed.iter().any(|args| *args != &names) {
                return unclear("memplan cannot read its template's parameters as nvcc does");
            }
        } else if name != anchor.name.trim_start_matches("::") {
            return unclear("its declarations name another function than its definition");
        }
        // Whether that name is one function, so that every declaration of
        // it is the kernel's, nvcc answers after this (`crate::probe`):
        // types as written here (`S` in a namespace, `unsigned`) cannot
        // tell overloads apart.
        if family[0].params.len() != function.params.len() {
            return unclear("its declarations have another number of parameters than it");
        }
        merge(&family, function).map(Lookup::Found)
    }
}

fn is_wrapper(printed: &Printed) -> bool {
    strip_arguments(&printed.name)
        .rsplit("::")
        .next()
        .is_some_and(|last| last.starts_with(scan::WRAPPER))
}

/// `ns::sc` of `ns::sc<int>`.
fn strip_arguments(name: &str) -> &str {
    name.split('<').next().unwrap_or(name)
}

/// The contracts that `declarations` (of one function) state together:
/// each parameter's, from whichever declaration states it; two that
/// state different ones are an error.
fn merge(declarations: &[&Printed], function: &Function) -> Result<KernelContracts, String> {
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
    declaration: &Printed,
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
            if let ExtentTerm::Param(index) = *term
                && let index = usize::from(index)
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

    fn lookup(code: &str, mangled: &str, name: &str) -> Result<Lookup, String> {
        let mut function = demangle(mangled).unwrap();
        function.name = name.to_owned();
        Contracts::read(code, &[]).of(&function, mangled)
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

    fn ambiguous(lookup: Result<Lookup, String>) -> bool {
        matches!(lookup, Ok(Lookup::Ambiguous(_)))
    }

    const CODE: &str = scan::tests::HOST_CODE;

    #[test]
    fn a_kernel_whose_name_is_shared_takes_no_contract() {
        // `a::k` and `b::k`: another namespace's kernel of the name.
        assert!(ambiguous(lookup(CODE, "_ZN1a1kEPKfi", "a::k")));
        assert!(ambiguous(lookup(CODE, "_ZN1b1kEPfi", "b::k")));
        // `touch`: a `__device__` function of the name has a contract.
        assert!(ambiguous(lookup(CODE, "_Z5touchPfi", "touch")));
    }

    #[test]
    fn a_kernel_alone_in_its_name_takes_its_declarations_contracts() {
        let dflt = found(lookup(CODE, "_Z4dfltPfi", "dflt"));
        assert_eq!(dflt, [Some((Access::Writes, "n".into())), None]);
        let inblock = found(lookup(CODE, "_Z7inblockPfi", "inblock"));
        assert_eq!(inblock[0], Some((Access::Writes, "(n + 1) / 2".into())));
    }

    #[test]
    fn a_template_instance_takes_its_templates_alone() {
        let fill = found(lookup(CODE, "_Z4fillIfEvPT_i", "fill<float>"));
        assert_eq!(fill, [Some((Access::Writes, "n".into())), None]);
        // `sc` has a specialization: none of its instances takes a contract.
        assert!(ambiguous(lookup(CODE, "_Z2scIfEvPKT_PS0_i", "sc<float>")));
    }

    #[test]
    fn a_declaration_and_the_definition_agree_on_name_and_types_not_spelling() {
        // A trailing return type: printed `auto tr(...)->void`, defined
        // `void tr(...)`: the same parameters, the same kernel.
        let tr = found(lookup(CODE, "_Z2trPfi", "tr"));
        assert_eq!(tr[0], Some((Access::Writes, "n".into())));
        // Types as printed are not compared: `unsigned` and `unsigned int`,
        // `Pair` in its namespace and nvcc's `_ZN2ns4PairE` are one type.
        // An overload of the name is nvcc's to find (`crate::probe`).
        let code = r#"namespace ns { __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:n" ))) const Pair *p, unsigned int n) ; }
void ns::k( const _ZN2ns4PairE *__cuda_0,unsigned __cuda_1)
{__device_stub__ZN2ns1kEPKNS_4PairEj( __cuda_0,__cuda_1); }"#;
        let k = found(lookup(code, "_ZN2ns1kEPKNS_4PairEj", "ns::k"));
        assert_eq!(k[0], Some((Access::Reads, "n".into())));
    }

    #[test]
    fn without_an_anchor_a_stated_contract_is_taken_by_nothing() {
        let code = r#"__attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:n" ))) const float *p, int n) ;"#;
        assert!(ambiguous(lookup(code, "_Z1kPKfi", "k")));
        assert_eq!(lookup("", "_Z1kPKfi", "k"), Ok(Lookup::None));
    }

    #[test]
    fn a_prototype_and_a_definition_state_one_contract_between_them() {
        let code = r#"extern "C" __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:count" ))) const float * a, int count);
extern "C" __attribute__((visibility("hidden"))) void k(const float *a, int n) ;
void k( const float *__cuda_0,int __cuda_1)
{__device_stub__Z1kPKfi( __cuda_0,__cuda_1); }"#;
        let k = found(lookup(code, "_Z1kPKfi", "k"));
        assert_eq!(k[0], Some((Access::Reads, "count".into())));
        let twice = r#"extern "C" __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:n" ))) const float * a, int n);
extern "C" __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:1" ))) const float *a, int n) ;
void k( const float *__cuda_0,int __cuda_1)
{__device_stub__Z1kPKfi( __cuda_0,__cuda_1); }"#;
        assert!(
            lookup(twice, "_Z1kPKfi", "k")
                .unwrap_err()
                .contains("declared twice with different contracts")
        );
    }

    #[test]
    fn contracts_that_cannot_be_true_are_build_errors() {
        let kernel = |name: &str, params: &str, types: &str, mangled: &str| {
            format!(
                "__attribute__((visibility(\"hidden\"))) void {name}({params}) ;\n\
                 void {name}({types})\n{{__device_stub_{mangled}(); }}\n"
            )
        };
        let error =
            |code: String, mangled: &str, name: &str| lookup(&code, mangled, name).unwrap_err();
        let bad = kernel(
            "bad",
            r#"__attribute((annotate("memplan:writes:n" ))) const float *a, int n"#,
            "const float *__cuda_0,int __cuda_1",
            "_Z3badPKfi",
        );
        assert!(error(bad, "_Z3badPKfi", "bad").contains("cannot write through a `const float *`"));
        let value = kernel(
            "value",
            r#"__attribute((annotate("memplan:reads:1" ))) int a, int n"#,
            "int __cuda_0,int __cuda_1",
            "_Z5valueii",
        );
        assert!(error(value, "_Z5valueii", "value").contains("is a `int`"));
        let names = kernel(
            "names",
            r#"__attribute((annotate("memplan:reads:m" ))) const float *a, int n"#,
            "const float *__cuda_0,int __cuda_1",
            "_Z5namesPKfi",
        );
        assert!(
            error(names, "_Z5namesPKfi", "names").contains("names `m`, which is not a parameter")
        );
        let two = kernel(
            "two",
            r#"__attribute((annotate("memplan:writes:n" ))) __attribute((annotate("memplan:reads:n" ))) float *a, int n"#,
            "float *__cuda_0,int __cuda_1",
            "_Z3twoPfi",
        );
        assert!(error(two, "_Z3twoPfi", "two").contains("has 2 contracts"));
    }
}
