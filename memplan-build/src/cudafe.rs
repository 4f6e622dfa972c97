//! The kernels of a `.cu` file and their parameters, from what nvcc's
//! front end writes for the host (`nvcc -cuda`).
//!
//! That output registers each `__global__` function with the runtime,
//! `__cudaRegisterFunction(handle, (const char*)stub, (char*)"symbol", ...)`,
//! naming the symbol the driver knows: an `extern "C"` kernel's plain name,
//! a C++ kernel's mangled name. And it defines a host stub per kernel,
//! `__device_stub__Z...`, named with the function's mangled name whatever
//! its linkage, which spells out its parameter types (see [`demangle`]).
//! nvcc's front end names the stub after a GPU compilation (the last
//! architecture's), so those are the types the device compiles, where a
//! typedef that `__CUDA_ARCH__` picks differs from the host's; that every
//! architecture agrees is checked apart (see [`crate::probe`]).
//! A C++ kernel's stub is its symbol after `__device_stub_`; an `extern
//! "C"` kernel's is the one whose demangled name ends in its symbol.

use crate::contract::{Contracts, KernelContracts, Lookup};
use crate::demangle::{self, Function};
use crate::waits::Forms;

/// A `__global__` function of a source file.
#[derive(Debug)]
pub struct Found {
    /// What the driver knows it by.
    pub symbol: String,
    pub extern_c: bool,
    /// Its name as C++ writes it from the file's top level, where its stub
    /// could be read: an `extern "C"` kernel's symbol has no namespace,
    /// its declaration may (`a::k`).
    pub qualified: Option<String>,
    /// Its name and parameters, or why they could not be read.
    pub function: Result<Function, String>,
    /// The contract of each parameter, where the source states any (see
    /// [`crate::contract`]).
    pub contracts: Lookup,
    /// Which of its compiled forms wait first (see [`crate::waits`]);
    /// filled in once the fatbin's PTX is read.
    pub waits_first: Forms,
}

impl Found {
    /// The contracts the kernel takes, if any.
    pub fn contracts(&self) -> Option<&KernelContracts> {
        match &self.contracts {
            Lookup::Found(contracts) => Some(contracts),
            Lookup::None | Lookup::Ambiguous(_) => None,
        }
    }
}

/// The kernels `host_code` (the output of `nvcc -cuda`) registers, with
/// the contracts their declarations state (`preprocessed`, the source
/// after each compilation's preprocessor, tells where a template is
/// specialized); an error is a contract that cannot be true of its kernel.
pub fn kernels(host_code: &str, preprocessed: &[&str]) -> Result<Vec<Found>, String> {
    let code = without_line_markers(host_code);
    let stubs = stub_names(&code);
    let contracts = Contracts::read(&code, preprocessed);
    registered_symbols(&code)
        .into_iter()
        .map(|symbol| {
            let extern_c = !symbol.starts_with("_Z");
            let stub = if extern_c {
                extern_c_stub(&symbol, &stubs)
            } else {
                Ok(symbol.clone())
            };
            let demangled = stub
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|stub| demangle::demangle(stub));
            let qualified = demangled.as_ref().ok().map(|f| f.name.clone());
            let function = demangled.map(|function| {
                if extern_c {
                    Function {
                        name: symbol.clone(),
                        ..function
                    }
                } else {
                    function
                }
            });
            let contracts = match (&function, &stub) {
                (Ok(function), Ok(stub)) => contracts.of(function, stub)?,
                _ => Lookup::None,
            };
            Ok(Found {
                symbol,
                extern_c,
                qualified,
                function,
                contracts,
                waits_first: Forms::default(),
            })
        })
        .collect()
}

/// The code without the preprocessor's `# 1 "file"` lines, which split
/// the registration calls.
fn without_line_markers(code: &str) -> String {
    code.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The symbol of each registration call, in order, without repeats.
fn registered_symbols(code: &str) -> Vec<String> {
    const CALL: &str = "__cudaRegisterFunction(";
    let mut symbols = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(CALL) {
        rest = &rest[at + CALL.len()..];
        // Calls pass the module handle first (`__T0`); the declaration of
        // the function itself, `void **fatCubinHandle`, does not.
        if !rest.trim_start().starts_with("__T") {
            continue;
        }
        let Some(symbol) = first_string_literal(rest) else {
            continue;
        };
        if !symbols.contains(&symbol) {
            symbols.push(symbol);
        }
    }
    symbols
}

fn first_string_literal(text: &str) -> Option<String> {
    let start = text.find('"')? + 1;
    let end = start + text[start..].find('"')?;
    Some(text[start..end].to_owned())
}

/// The mangled names (`_Z...`) of the stubs defined or declared.
fn stub_names(code: &str) -> Vec<String> {
    const STUB: &str = "__device_stub_";
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(STUB) {
        rest = &rest[at + STUB.len()..];
        if !rest.starts_with("_Z") {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = rest[..end].to_owned();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The stub of an `extern "C"` kernel: the one whose demangled name is
/// `symbol` (unqualified: an `extern "C"` name has no namespace).
fn extern_c_stub(symbol: &str, stubs: &[String]) -> Result<String, String> {
    let matches: Vec<&String> = stubs
        .iter()
        .filter(|stub| {
            demangle::demangle(stub)
                .is_ok_and(|function| function.name.rsplit("::").next() == Some(symbol))
        })
        .collect();
    match matches[..] {
        [stub] => Ok(stub.clone()),
        _ => Err(format!(
            "nvcc's output has {} stubs for `{symbol}`, where one was expected",
            matches.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demangle::{Builtin, CType};

    /// The parts of `nvcc -cuda` output (13.0) this reads, with the line
    /// markers and the function's own declaration around them.
    const HOST_CODE: &str = r#"
extern void __cudaRegisterFunction(
        void   **fatCubinHandle,
  const char    *hostFun,
        char    *deviceFun);
extern __attribute__((visibility("hidden"))) void __device_stub__Z4vaddPKfS0_Pfi(const float *__restrict__, const float *, float *, int);
extern __attribute__((visibility("hidden"))) void __device_stub__Z10cpp_kernelPKdPdj(const double *, double *, unsigned);
static void __device_stub__Z6tscaleIfEvPKT_PS0_S0_i(const float *, float *, float, int);
template<> void __wrapper__device_stub_tscale<float>( const float *&__cuda_0,float *&__cuda_1,float &__cuda_2,int &__cuda_3){__device_stub__Z6tscaleIfEvPKT_PS0_S0_i( (const float *&)__cuda_0,(float *&)__cuda_1,(float &)__cuda_2,(int &)__cuda_3);}
 __cudaRegisterFunction(
# 1 "/tmp/tmpxft_00007c84_00000000-6_k.cudafe1.stub.c"
 __T1
# 1 "/tmp/tmpxft_00007c84_00000000-6_k.cudafe1.stub.c" 3
 , (const char*)
 ((void ( *)(const float *, float *, float, int))tscale<float> )
 , (char*)
 "_Z6tscaleIfEvPKT_PS0_S0_i"
 , 
 "_Z6tscaleIfEvPKT_PS0_S0_i"
 , -1, (uint3*)0, (uint3*)0, (dim3*)0, (dim3*)0, (int*)0)
 ; 
 __cudaRegisterFunction(__T1, (const char*)((void ( *)(const double *, double *, unsigned))cpp_kernel), (char*)"_Z10cpp_kernelPKdPdj", "_Z10cpp_kernelPKdPdj", -1, (uint3*)0, (uint3*)0, (dim3*)0, (dim3*)0, (int*)0);
 __cudaRegisterFunction(__T1, (const char*)((void ( *)(const float *, const float *, float *, int))vadd), (char*)"vadd", "vadd", -1, (uint3*)0, (uint3*)0, (dim3*)0, (dim3*)0, (int*)0);
"#;

    #[test]
    fn finds_every_registered_kernel_with_its_parameters() {
        let found = kernels(HOST_CODE, &[]).unwrap();
        let summary: Vec<(&str, bool, String)> = found
            .iter()
            .map(|k| {
                (
                    k.symbol.as_str(),
                    k.extern_c,
                    k.function.as_ref().unwrap().name.clone(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "_Z6tscaleIfEvPKT_PS0_S0_i",
                    false,
                    "tscale<float>".to_owned()
                ),
                ("_Z10cpp_kernelPKdPdj", false, "cpp_kernel".to_owned()),
                ("vadd", true, "vadd".to_owned()),
            ]
        );
        let vadd = found[2].function.as_ref().unwrap();
        assert_eq!(vadd.params.len(), 4);
        assert_eq!(vadd.params[3], CType::Builtin(Builtin::Int));
    }

    #[test]
    fn a_kernel_without_its_stub_is_unreadable_not_guessed() {
        let code =
            r#"__cudaRegisterFunction(__T1, (const char*)f, (char*)"lonely", "lonely", -1);"#;
        let found = kernels(code, &[]).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].function.is_err());
    }
}
