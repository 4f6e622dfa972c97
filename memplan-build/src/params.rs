//! C++ parameter types and contracts as the runtime's `CParam` and
//! `Contract` values, written as Rust source for the generated file, and
//! the C++ declaration for messages.

use crate::contract::{Contract, KernelContracts};
use crate::demangle::{Builtin, CType, Function};
use crate::layout::Layouts;
use memplan_model::ExtentTerm;

/// `function` as a `CParam` list in Rust source, the runtime's types
/// named through `runtime` (`::memplan`), classes with their `layouts`.
pub fn rust_params(function: &Function, layouts: &Layouts, runtime: &str) -> String {
    let params: Vec<String> = function
        .params
        .iter()
        .map(|param| param_source(param, layouts, runtime))
        .collect();
    format!("&[{}]", params.join(", "))
}

/// The contracts of a kernel's parameters as a slice of
/// `Option<Contract>` in Rust source; empty for a kernel without any.
pub fn rust_contracts(contracts: Option<&KernelContracts>, runtime: &str) -> String {
    let Some(contracts) = contracts else {
        return "&[]".to_owned();
    };
    let params: Vec<String> = contracts
        .params
        .iter()
        .map(|contract| match contract {
            None => "None".to_owned(),
            Some(contract) => format!("Some({})", contract_source(contract, runtime)),
        })
        .collect();
    format!("&[{}]", params.join(", "))
}

fn contract_source(contract: &Contract, runtime: &str) -> String {
    let terms: Vec<String> = contract
        .program
        .iter()
        .map(|term| {
            let term = match *term {
                ExtentTerm::Param(index) => format!("Param({index})"),
                ExtentTerm::Literal(value) => format!("Literal({value})"),
                ExtentTerm::Add => "Add".to_owned(),
                ExtentTerm::Sub => "Sub".to_owned(),
                ExtentTerm::Mul => "Mul".to_owned(),
                ExtentTerm::Div => "Div".to_owned(),
                ExtentTerm::Rem => "Rem".to_owned(),
            };
            format!("{runtime}::ExtentTerm::{term}")
        })
        .collect();
    format!(
        "{runtime}::Contract {{ access: {runtime}::ContractAccess::{}, extent: {:?}, program: &[{}] }}",
        contract.access.variant(),
        contract.text,
        terms.join(", ")
    )
}

fn param_source(param: &CType, layouts: &Layouts, runtime: &str) -> String {
    let other = || format!("{runtime}::CParam::Other({:?})", param.to_string());
    match param {
        CType::Pointer(pointee) => {
            let (pointee, konst) = match &**pointee {
                CType::Qualified { konst, inner, .. } => (&**inner, *konst),
                plain => (plain, false),
            };
            match scalar_source(pointee, layouts, runtime) {
                Some(scalar) => {
                    format!("{runtime}::CParam::Pointer {{ pointee: {scalar}, konst: {konst} }}")
                }
                None => other(),
            }
        }
        // A top-level qualifier does not change what is passed.
        CType::Qualified { inner, .. } if !matches!(**inner, CType::Pointer(_)) => {
            match scalar_source(inner, layouts, runtime) {
                Some(scalar) => format!("{runtime}::CParam::Value({scalar})"),
                None => other(),
            }
        }
        _ => match scalar_source(param, layouts, runtime) {
            Some(scalar) => format!("{runtime}::CParam::Value({scalar})"),
            None => other(),
        },
    }
}

/// A scalar or class type as a `CScalar`; `None` for pointers and the
/// like, which are not scalars. A class is known by its qualified name
/// and measured layout; one that could not be measured is `Other`, which
/// no declaration matches.
fn scalar_source(ty: &CType, layouts: &Layouts, runtime: &str) -> Option<String> {
    let variant = match ty {
        CType::Builtin(builtin) => match builtin {
            Builtin::Bool => "Bool".to_owned(),
            Builtin::Char | Builtin::SignedChar => "I8".to_owned(),
            Builtin::UnsignedChar => "U8".to_owned(),
            Builtin::Short => "I16".to_owned(),
            Builtin::UnsignedShort => "U16".to_owned(),
            Builtin::Int => "I32".to_owned(),
            Builtin::Unsigned => "U32".to_owned(),
            // 64-bit Linux: `long` is 64 bits, as `long long`.
            Builtin::Long | Builtin::LongLong => "I64".to_owned(),
            Builtin::UnsignedLong | Builtin::UnsignedLongLong => "U64".to_owned(),
            Builtin::Float => "F32".to_owned(),
            Builtin::Double => "F64".to_owned(),
            other => format!("Other({:?})", other.c_name()),
        },
        CType::Named(name) => match layouts.get(name) {
            Some(layout) => format!(
                "Named {{ name: {name:?}, size: {}, align: {} }}",
                layout.size, layout.align
            ),
            None => format!("Other({name:?})"),
        },
        _ => return None,
    };
    Some(format!("{runtime}::CScalar::{variant}"))
}

/// `extern "C" __global__ void vadd(const float *, float *, int)`; with
/// contracts, as the source states them, with the parameters' names:
/// `vadd(MEMPLAN_READS(n) const float *a, MEMPLAN_WRITES(n) float *c, int n)`.
pub fn cpp_declaration(
    function: &Function,
    extern_c: bool,
    contracts: Option<&KernelContracts>,
) -> String {
    let params: Vec<String> = function
        .params
        .iter()
        .enumerate()
        .map(|(index, ty)| {
            let Some(contracts) = contracts else {
                return ty.to_string();
            };
            let contract = match &contracts.params[index] {
                Some(contract) => {
                    format!("{}({}) ", contract.access.macro_name(), contract.text)
                }
                None => String::new(),
            };
            let name = &contracts.names[index];
            if name.starts_with("__T") {
                format!("{contract}{ty}")
            } else if ty.to_string().ends_with('*') {
                format!("{contract}{ty}{name}")
            } else {
                format!("{contract}{ty} {name}")
            }
        })
        .collect();
    let linkage = if extern_c {
        "extern \"C\" "
    } else if function.name.contains('<') {
        "template "
    } else {
        ""
    };
    format!(
        "{linkage}__global__ void {}({})",
        function.name,
        params.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demangle::demangle;

    #[test]
    fn pointers_values_and_classes() {
        let vadd = demangle("_Z4vaddPKfS0_Pfi").unwrap();
        assert_eq!(
            rust_params(&vadd, &Layouts::new(), "rt"),
            "&[rt::CParam::Pointer { pointee: rt::CScalar::F32, konst: true }, \
             rt::CParam::Pointer { pointee: rt::CScalar::F32, konst: true }, \
             rt::CParam::Pointer { pointee: rt::CScalar::F32, konst: false }, \
             rt::CParam::Value(rt::CScalar::I32)]"
        );
        let mixed = demangle("_Z1fmxN2ns4PairEPPfRiP6float4").unwrap();
        let measured = Layouts::from([(
            "ns::Pair".to_owned(),
            crate::layout::Layout { size: 16, align: 8 },
        )]);
        assert_eq!(
            rust_params(&mixed, &measured, "rt"),
            "&[rt::CParam::Value(rt::CScalar::U64), rt::CParam::Value(rt::CScalar::I64), \
             rt::CParam::Value(rt::CScalar::Named { name: \"ns::Pair\", size: 16, align: 8 }), \
             rt::CParam::Other(\"float * *\"), rt::CParam::Other(\"int &\"), \
             rt::CParam::Pointer { pointee: rt::CScalar::Other(\"float4\"), konst: false }]"
        );
    }

    #[test]
    fn declarations_as_cpp_writes_them() {
        let vadd = demangle("_Z4vaddPKfS0_Pfi").unwrap();
        assert_eq!(
            cpp_declaration(&vadd, true, None),
            "extern \"C\" __global__ void vadd(const float *, const float *, float *, int)"
        );
        let scale = demangle("_Z6tscaleIfEvPKT_PS0_S0_i").unwrap();
        assert_eq!(
            cpp_declaration(&scale, false, None),
            "template __global__ void tscale<float>(const float *, float *, float, int)"
        );
        let contracts = KernelContracts {
            names: vec!["a".into(), "__T1".into(), "n".into()],
            params: vec![
                Some(Contract {
                    access: crate::contract::Access::Reads,
                    text: "n".into(),
                    program: vec![ExtentTerm::Param(2)],
                }),
                None,
                None,
            ],
        };
        let partly = demangle("_Z4halfPKfPfi").unwrap();
        assert_eq!(
            cpp_declaration(&partly, true, Some(&contracts)),
            "extern \"C\" __global__ void half(MEMPLAN_READS(n) const float *a, float *, int n)"
        );
        assert_eq!(
            rust_contracts(Some(&contracts), "rt"),
            "&[Some(rt::Contract { access: rt::ContractAccess::Reads, extent: \"n\", \
             program: &[rt::ExtentTerm::Param(2)] }), None, None]"
        );
    }
}
