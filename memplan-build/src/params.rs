//! C++ parameter types as the runtime's `CParam` values, written as Rust
//! source for the generated file, and the C++ declaration for messages.

use crate::demangle::{Builtin, CType, Function};

/// `function` as a `CParam` list in Rust source, the runtime's types
/// named through `runtime` (`::memplan`).
pub fn rust_params(function: &Function, runtime: &str) -> String {
    let params: Vec<String> = function
        .params
        .iter()
        .map(|param| param_source(param, runtime))
        .collect();
    format!("&[{}]", params.join(", "))
}

fn param_source(param: &CType, runtime: &str) -> String {
    let other = || format!("{runtime}::CParam::Other({:?})", param.to_string());
    match param {
        CType::Pointer(pointee) => {
            let (pointee, konst) = match &**pointee {
                CType::Qualified { konst, inner, .. } => (&**inner, *konst),
                plain => (plain, false),
            };
            match scalar_source(pointee, runtime) {
                Some(scalar) => {
                    format!("{runtime}::CParam::Pointer {{ pointee: {scalar}, konst: {konst} }}")
                }
                None => other(),
            }
        }
        // A top-level qualifier does not change what is passed.
        CType::Qualified { inner, .. } if !matches!(**inner, CType::Pointer(_)) => {
            match scalar_source(inner, runtime) {
                Some(scalar) => format!("{runtime}::CParam::Value({scalar})"),
                None => other(),
            }
        }
        _ => match scalar_source(param, runtime) {
            Some(scalar) => format!("{runtime}::CParam::Value({scalar})"),
            None => other(),
        },
    }
}

/// A scalar or class type as a `CScalar`; `None` for pointers and the
/// like, which are not scalars.
fn scalar_source(ty: &CType, runtime: &str) -> Option<String> {
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
        // A class by its unqualified name; a template instance or an odd
        // name is nothing a Rust type name matches.
        CType::Named(name) => {
            let last = name.rsplit("::").next().unwrap_or(name);
            if last.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                format!("Named({last:?})")
            } else {
                format!("Other({name:?})")
            }
        }
        _ => return None,
    };
    Some(format!("{runtime}::CScalar::{variant}"))
}

/// `extern "C" __global__ void vadd(const float *, float *, int)`.
pub fn cpp_declaration(function: &Function, extern_c: bool) -> String {
    let params: Vec<String> = function.params.iter().map(ToString::to_string).collect();
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
            rust_params(&vadd, "rt"),
            "&[rt::CParam::Pointer { pointee: rt::CScalar::F32, konst: true }, \
             rt::CParam::Pointer { pointee: rt::CScalar::F32, konst: true }, \
             rt::CParam::Pointer { pointee: rt::CScalar::F32, konst: false }, \
             rt::CParam::Value(rt::CScalar::I32)]"
        );
        let mixed = demangle("_Z1fmxN2ns4PairEPPfRi").unwrap();
        assert_eq!(
            rust_params(&mixed, "rt"),
            "&[rt::CParam::Value(rt::CScalar::U64), rt::CParam::Value(rt::CScalar::I64), \
             rt::CParam::Value(rt::CScalar::Named(\"Pair\")), rt::CParam::Other(\"float * *\"), \
             rt::CParam::Other(\"int &\")]"
        );
    }

    #[test]
    fn declarations_as_cpp_writes_them() {
        let vadd = demangle("_Z4vaddPKfS0_Pfi").unwrap();
        assert_eq!(
            cpp_declaration(&vadd, true),
            "extern \"C\" __global__ void vadd(const float *, const float *, float *, int)"
        );
        let scale = demangle("_Z6tscaleIfEvPKT_PS0_S0_i").unwrap();
        assert_eq!(
            cpp_declaration(&scale, false),
            "template __global__ void tscale<float>(const float *, float *, float, int)"
        );
    }
}
