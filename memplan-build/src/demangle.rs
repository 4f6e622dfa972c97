//! Reading a kernel's C++ parameter types from its mangled name.
//!
//! nvcc names the host-side stub of every `__global__` function, `extern
//! "C"` or not, `__device_stub_` followed by the function's Itanium-ABI
//! mangled name, which spells out every parameter type with typedefs
//! resolved (`size_t` is `unsigned long`). This module reads the part of
//! that grammar kernels use: namespaces, function templates with type and
//! literal arguments, builtin types, classes, pointers, references, `const`,
//! `volatile`, `__restrict__`, substitutions and template parameters.
//! Anything else is an error, and the kernel's signature is then unknown.

use std::fmt;

/// A C++ type, as far as kernel parameters need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CType {
    Builtin(Builtin),
    /// A class, struct, union or enum, by its qualified name.
    Named(String),
    Pointer(Box<CType>),
    Reference(Box<CType>),
    RvalueReference(Box<CType>),
    Qualified {
        konst: bool,
        volatile: bool,
        restrict: bool,
        inner: Box<CType>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Void,
    Bool,
    Char,
    SignedChar,
    UnsignedChar,
    Short,
    UnsignedShort,
    Int,
    Unsigned,
    Long,
    UnsignedLong,
    LongLong,
    UnsignedLongLong,
    Int128,
    UnsignedInt128,
    Float,
    Double,
    LongDouble,
    Half,
    WChar,
    Char8,
    Char16,
    Char32,
    Nullptr,
}

impl Builtin {
    pub fn c_name(self) -> &'static str {
        match self {
            Builtin::Void => "void",
            Builtin::Bool => "bool",
            Builtin::Char => "char",
            Builtin::SignedChar => "signed char",
            Builtin::UnsignedChar => "unsigned char",
            Builtin::Short => "short",
            Builtin::UnsignedShort => "unsigned short",
            Builtin::Int => "int",
            Builtin::Unsigned => "unsigned int",
            Builtin::Long => "long",
            Builtin::UnsignedLong => "unsigned long",
            Builtin::LongLong => "long long",
            Builtin::UnsignedLongLong => "unsigned long long",
            Builtin::Int128 => "__int128",
            Builtin::UnsignedInt128 => "unsigned __int128",
            Builtin::Float => "float",
            Builtin::Double => "double",
            Builtin::LongDouble => "long double",
            Builtin::Half => "__half",
            Builtin::WChar => "wchar_t",
            Builtin::Char8 => "char8_t",
            Builtin::Char16 => "char16_t",
            Builtin::Char32 => "char32_t",
            Builtin::Nullptr => "std::nullptr_t",
        }
    }
}

impl fmt::Display for CType {
    /// C++ spelling with `const` first: `const float *`, `Pair`, `int &`.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            CType::Builtin(builtin) => f.write_str(builtin.c_name()),
            CType::Named(name) => f.write_str(name),
            CType::Pointer(inner) => write!(f, "{inner} *"),
            CType::Reference(inner) => write!(f, "{inner} &"),
            CType::RvalueReference(inner) => write!(f, "{inner} &&"),
            CType::Qualified {
                konst,
                volatile,
                restrict,
                inner,
            } => {
                // `const T` before a plain type, `T *const` after a pointer.
                let words: Vec<&str> = [
                    (konst, "const"),
                    (volatile, "volatile"),
                    (restrict, "__restrict__"),
                ]
                .into_iter()
                .filter(|(on, _)| **on)
                .map(|(_, word)| word)
                .collect();
                match **inner {
                    CType::Pointer(_) | CType::Reference(_) | CType::RvalueReference(_) => {
                        write!(f, "{inner}{}", words.join(" "))
                    }
                    _ => write!(f, "{} {inner}", words.join(" ")),
                }
            }
        }
    }
}

/// A demangled function: its qualified name with template arguments, and
/// its parameter types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub params: Vec<CType>,
}

/// `mangled` (starting `_Z`) read as a function, or why it could not be.
pub fn demangle(mangled: &str) -> Result<Function, String> {
    let rest = mangled
        .strip_prefix("_Z")
        .ok_or_else(|| format!("`{mangled}` is not a mangled name"))?;
    let mut reader = Reader {
        text: rest.as_bytes(),
        at: 0,
        substitutions: Vec::new(),
        template_args: Vec::new(),
    };
    let function = reader
        .encoding()
        .map_err(|why| format!("cannot read `{mangled}`: {why}"))?;
    if reader.at != reader.text.len() {
        return Err(format!(
            "cannot read `{mangled}`: unexpected `{}`",
            String::from_utf8_lossy(&reader.text[reader.at..])
        ));
    }
    Ok(function)
}

/// A substitution candidate: a type, or a name prefix (printed alike).
#[derive(Clone, Debug)]
enum Candidate {
    Type(CType),
    Prefix(String),
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
    substitutions: Vec<Candidate>,
    /// The function template's arguments, for `T_`.
    template_args: Vec<CType>,
}

type Read<T> = Result<T, String>;

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect(&mut self, byte: u8) -> Read<()> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(format!("expected `{}` at {}", byte as char, self.at))
        }
    }

    /// `<name> <bare-function-type>`; a template's return type comes first.
    fn encoding(&mut self) -> Read<Function> {
        let (name, is_template) = self.name()?;
        if is_template {
            let _return_type = self.ty()?;
        }
        let mut params = Vec::new();
        while self.peek().is_some() {
            params.push(self.ty()?);
        }
        if params.is_empty() {
            return Err("no parameter list".into());
        }
        // `(void)`: no parameters.
        if params == [CType::Builtin(Builtin::Void)] {
            params.clear();
        }
        Ok(Function { name, params })
    }

    /// A function's name, and whether it has template arguments.
    fn name(&mut self) -> Read<(String, bool)> {
        if self.eat(b'N') {
            return self.nested_name();
        }
        let mut name = if self.text[self.at..].starts_with(b"St") {
            self.at += 2;
            format!("std::{}", self.source_name()?)
        } else {
            self.source_name()?
        };
        if self.peek() == Some(b'I') {
            // An unscoped template name is a candidate, then its arguments.
            self.substitutions.push(Candidate::Prefix(name.clone()));
            let args = self.template_args()?;
            name += &args;
            return Ok((name, true));
        }
        Ok((name, false))
    }

    /// `N [qualifiers] <prefix> <component> E`: every prefix before the
    /// last component is a substitution candidate.
    fn nested_name(&mut self) -> Read<(String, bool)> {
        while matches!(self.peek(), Some(b'K' | b'V' | b'r')) {
            self.at += 1;
        }
        let mut name = String::new();
        let mut is_template = false;
        // A prefix read from a substitution is one already: not again.
        let mut substituted = false;
        loop {
            if self.eat(b'E') {
                break;
            }
            if !name.is_empty() && !substituted {
                self.substitutions.push(Candidate::Prefix(name.clone()));
            }
            substituted = false;
            match self.peek() {
                Some(b'I') => {
                    if name.is_empty() {
                        return Err("template arguments without a name".into());
                    }
                    name += &self.template_args()?;
                    is_template = true;
                    continue;
                }
                Some(b'S') => {
                    name = self.substitution()?.to_string();
                    substituted = true;
                }
                Some(b'0'..=b'9') => {
                    let part = self.source_name()?;
                    name = if name.is_empty() {
                        part
                    } else {
                        format!("{name}::{part}")
                    };
                }
                _ => return Err(format!("unsupported name part at {}", self.at)),
            }
            is_template = false;
        }
        if name.is_empty() {
            return Err("an empty nested name".into());
        }
        Ok((name, is_template))
    }

    /// `<length> <identifier>`.
    fn source_name(&mut self) -> Read<String> {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let length: usize = std::str::from_utf8(&self.text[start..self.at])
            .ok()
            .and_then(|digits| digits.parse().ok())
            .ok_or_else(|| format!("expected a name length at {start}"))?;
        let end = self
            .at
            .checked_add(length)
            .filter(|end| *end <= self.text.len())
            .ok_or("a name runs past the end")?;
        let name = String::from_utf8_lossy(&self.text[self.at..end]).into_owned();
        self.at = end;
        Ok(name)
    }

    /// `I <arg>+ E`, printed `<float, 4>`; the arguments become the
    /// function's template parameters.
    fn template_args(&mut self) -> Read<String> {
        self.expect(b'I')?;
        let mut printed = Vec::new();
        let mut args = Vec::new();
        while !self.eat(b'E') {
            if self.peek().is_none() {
                return Err("unterminated template arguments".into());
            }
            if self.eat(b'L') {
                printed.push(self.literal()?);
                // A literal is not a type: `T_` never names it usefully.
                args.push(CType::Named(printed.last().cloned().unwrap_or_default()));
            } else {
                let ty = self.ty()?;
                printed.push(ty.to_string());
                args.push(ty);
            }
        }
        self.template_args = args;
        Ok(format!("<{}>", printed.join(", ")))
    }

    /// `L <type> <value> E` after the `L`, typed as C++ writes it so that
    /// the name means one entity: `Li4E` is `4`, `Lj4E` `4u`, `Lb1E`
    /// `true`, `Lc65E` `(char)65`, an enum's `L1EE1E` `(E)1`. (`V<4>` and
    /// `V<4u>` are two classes of a `template <auto N>`.)
    fn literal(&mut self) -> Read<String> {
        let ty = self.ty()?;
        let negative = self.eat(b'n');
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = String::from_utf8_lossy(&self.text[start..self.at]).into_owned();
        self.expect(b'E')?;
        if digits.is_empty() {
            return Err("unsupported literal".into());
        }
        let value = if negative {
            format!("-{digits}")
        } else {
            digits.clone()
        };
        // A negative literal is the negation of a positive one, of the
        // suffix's type only where that holds the magnitude: the least
        // value (`-2147483648`, a `long`) is written as C++ headers do,
        // `(-2147483647 - 1)`.
        let suffix = |suffix: &str, bits: u32| -> Read<String> {
            let least = 1u128 << (bits - 1);
            let magnitude: u128 = digits
                .parse()
                .map_err(|_| format!("literal `{value}` out of range"))?;
            Ok(match (negative, magnitude) {
                (true, m) if m == least => format!("(-{}{suffix} - 1)", least - 1),
                (true, m) if m > least => return Err(format!("literal `{value}` out of range")),
                _ => format!("{value}{suffix}"),
            })
        };
        Ok(match &ty {
            CType::Builtin(Builtin::Bool) => (if value == "0" { "false" } else { "true" }).into(),
            // The LP64 widths nvcc compiles for.
            CType::Builtin(Builtin::Int) => suffix("", 32)?,
            CType::Builtin(Builtin::Unsigned) => suffix("u", 32)?,
            CType::Builtin(Builtin::Long) => suffix("l", 64)?,
            CType::Builtin(Builtin::UnsignedLong) => suffix("ul", 64)?,
            CType::Builtin(Builtin::LongLong) => suffix("ll", 64)?,
            CType::Builtin(Builtin::UnsignedLongLong) => suffix("ull", 64)?,
            CType::Builtin(
                Builtin::Char
                | Builtin::SignedChar
                | Builtin::UnsignedChar
                | Builtin::Short
                | Builtin::UnsignedShort
                | Builtin::WChar
                | Builtin::Char8
                | Builtin::Char16
                | Builtin::Char32,
            )
            | CType::Named(_) => format!("({ty}){value}"),
            _ => return Err(format!("unsupported literal of type `{ty}`")),
        })
    }

    fn ty(&mut self) -> Read<CType> {
        let Some(first) = self.peek() else {
            return Err("expected a type".into());
        };
        if let Some(builtin) = builtin(first) {
            self.at += 1;
            return Ok(CType::Builtin(builtin));
        }
        let ty = match first {
            b'D' => {
                let builtin = match self.text.get(self.at + 1) {
                    Some(b'h') => Builtin::Half,
                    Some(b'u') => Builtin::Char8,
                    Some(b's') => Builtin::Char16,
                    Some(b'i') => Builtin::Char32,
                    Some(b'n') => Builtin::Nullptr,
                    _ => return Err(format!("unsupported type at {}", self.at)),
                };
                self.at += 2;
                return Ok(CType::Builtin(builtin));
            }
            b'K' | b'V' | b'r' => {
                let (mut konst, mut volatile, mut restrict) = (false, false, false);
                // The ABI orders them r, V, K.
                while let Some(q @ (b'K' | b'V' | b'r')) = self.peek() {
                    self.at += 1;
                    match q {
                        b'K' => konst = true,
                        b'V' => volatile = true,
                        _ => restrict = true,
                    }
                }
                CType::Qualified {
                    konst,
                    volatile,
                    restrict,
                    inner: Box::new(self.ty()?),
                }
            }
            b'P' => {
                self.at += 1;
                CType::Pointer(Box::new(self.ty()?))
            }
            b'R' => {
                self.at += 1;
                CType::Reference(Box::new(self.ty()?))
            }
            b'O' => {
                self.at += 1;
                CType::RvalueReference(Box::new(self.ty()?))
            }
            b'T' => {
                let index = self.sequence(b'T')?;
                self.template_args.get(index).cloned().ok_or_else(|| {
                    format!("template parameter {index} of {}", self.template_args.len())
                })?
            }
            b'S' => {
                let candidate = self.substitution()?;
                // A substituted template name takes arguments again.
                if self.peek() == Some(b'I') {
                    let name = format!("{candidate}{}", self.template_args_of_type()?);
                    CType::Named(name)
                } else {
                    return Ok(candidate.into_type());
                }
            }
            b'N' => {
                self.at += 1;
                let (name, _) = self.nested_name()?;
                CType::Named(name)
            }
            b'0'..=b'9' => {
                let mut name = self.source_name()?;
                if self.peek() == Some(b'I') {
                    self.substitutions.push(Candidate::Prefix(name.clone()));
                    name += &self.template_args_of_type()?;
                }
                CType::Named(name)
            }
            _ => return Err(format!("unsupported type at {}", self.at)),
        };
        self.substitutions.push(Candidate::Type(ty.clone()));
        Ok(ty)
    }

    /// Template arguments of a class type (`Vec<float>`), which do not
    /// replace the function's own template parameters.
    fn template_args_of_type(&mut self) -> Read<String> {
        let saved = std::mem::take(&mut self.template_args);
        let printed = self.template_args();
        self.template_args = saved;
        printed
    }

    /// `S_`, `S<base 36>_`, or a standard abbreviation.
    fn substitution(&mut self) -> Read<Candidate> {
        self.expect(b'S')?;
        let standard = match self.peek() {
            Some(b't') => Some("std"),
            Some(b'a') => Some("std::allocator"),
            Some(b'b') => Some("std::basic_string"),
            Some(b's') => Some("std::string"),
            _ => None,
        };
        if let Some(name) = standard {
            self.at += 1;
            return Ok(Candidate::Prefix(name.into()));
        }
        self.at -= 1;
        let index = self.sequence(b'S')?;
        self.substitutions
            .get(index)
            .cloned()
            .ok_or_else(|| format!("substitution {index} of {}", self.substitutions.len()))
    }

    /// `X_` is 0, `X0_` is 1, `X1_` 2, ..., in base 36 (digits then capitals).
    fn sequence(&mut self, letter: u8) -> Read<usize> {
        self.expect(letter)?;
        if self.eat(b'_') {
            return Ok(0);
        }
        let mut value: usize = 0;
        loop {
            let digit = match self.peek() {
                Some(d @ b'0'..=b'9') => usize::from(d - b'0'),
                Some(d @ b'A'..=b'Z') => usize::from(d - b'A') + 10,
                Some(b'_') => {
                    self.at += 1;
                    return value.checked_add(1).ok_or_else(|| "index too large".into());
                }
                _ => return Err(format!("bad index at {}", self.at)),
            };
            self.at += 1;
            value = value
                .checked_mul(36)
                .and_then(|v| v.checked_add(digit))
                .ok_or("index too large")?;
        }
    }
}

impl Candidate {
    fn into_type(self) -> CType {
        match self {
            Candidate::Type(ty) => ty,
            Candidate::Prefix(name) => CType::Named(name),
        }
    }
}

impl fmt::Display for Candidate {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Candidate::Type(ty) => write!(f, "{ty}"),
            Candidate::Prefix(name) => f.write_str(name),
        }
    }
}

fn builtin(code: u8) -> Option<Builtin> {
    Some(match code {
        b'v' => Builtin::Void,
        b'b' => Builtin::Bool,
        b'c' => Builtin::Char,
        b'a' => Builtin::SignedChar,
        b'h' => Builtin::UnsignedChar,
        b's' => Builtin::Short,
        b't' => Builtin::UnsignedShort,
        b'i' => Builtin::Int,
        b'j' => Builtin::Unsigned,
        b'l' => Builtin::Long,
        b'm' => Builtin::UnsignedLong,
        b'x' => Builtin::LongLong,
        b'y' => Builtin::UnsignedLongLong,
        b'n' => Builtin::Int128,
        b'o' => Builtin::UnsignedInt128,
        b'f' => Builtin::Float,
        b'd' => Builtin::Double,
        b'e' => Builtin::LongDouble,
        b'w' => Builtin::WChar,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name(param, param, ...)` as C++ prints it.
    fn read(mangled: &str) -> String {
        let function = demangle(mangled).unwrap();
        let params: Vec<String> = function.params.iter().map(ToString::to_string).collect();
        format!("{}({})", function.name, params.join(", "))
    }

    #[test]
    fn reads_what_nvcc_writes() {
        // Names nvcc 13.0 gave the stubs of these kernels.
        assert_eq!(
            read("_Z4vaddPKfS0_Pfi"),
            "vadd(const float *, const float *, float *, int)"
        );
        assert_eq!(
            read("_Z5mixedPjjymdfl"),
            "mixed(unsigned int *, unsigned int, unsigned long long, unsigned long, double, float, long)"
        );
        assert_eq!(
            read("_Z10cpp_kernelPKdPdj"),
            "cpp_kernel(const double *, double *, unsigned int)"
        );
        assert_eq!(
            read("_Z6tscaleIfEvPKT_PS0_S0_i"),
            "tscale<float>(const float *, float *, float, int)"
        );
        assert_eq!(
            read("_Z6tscaleIdEvPKT_PS0_S0_i"),
            "tscale<double>(const double *, double *, double, int)"
        );
        assert_eq!(read("_Z9by_struct4PairPf"), "by_struct(Pair, float *)");
        assert_eq!(read("_ZN2ns5innerEPi"), "ns::inner(int *)");
        assert_eq!(read("_Z4noopv"), "noop()");
    }

    #[test]
    fn reads_qualifiers_references_and_literal_arguments() {
        assert_eq!(read("_Z1fPrKf"), "f(const __restrict__ float *)");
        assert_eq!(read("_Z1fRKi"), "f(const int &)");
        assert_eq!(read("_Z1fPKPf"), "f(float *const *)");
        assert_eq!(read("_Z4tileILi16EEvPf"), "tile<16>(float *)");
        // Typed, as `V<4>` and `V<4u>` are two classes of `template <auto N>`.
        assert_eq!(read("_Z1kP1VILj4EEi"), "k(V<4u> *, int)");
        assert_eq!(read("_Z2tcILc65EEvPfi"), "tc<(char)65>(float *, int)");
        assert_eq!(read("_Z2teIL1E1EEvPfi"), "te<(E)1>(float *, int)");
        assert_eq!(read("_Z2tbILb1EEvPfi"), "tb<true>(float *, int)");
        assert_eq!(read("_Z1tILin3EEvv"), "t<-3>()");
        assert_eq!(read("_Z1tILyn3EEvv"), "t<-3ull>()");
        // The least of each type, which a minus before its magnitude is not.
        assert_eq!(
            read("_Z1kP1VILin2147483648EEi"),
            "k(V<(-2147483647 - 1)> *, int)"
        );
        assert_eq!(
            read("_Z1kP1VILxn9223372036854775808EEi"),
            "k(V<(-9223372036854775807ll - 1)> *, int)"
        );
        assert!(demangle("_Z1kP1VILin2147483649EEi").is_err());
        assert_eq!(read("_ZN1a1b1cEPNS_4PairE"), "a::b::c(a::Pair *)");
        assert_eq!(read("_Z1fDhPDh"), "f(__half, __half *)");
        assert_eq!(read("_Z1fP4PairS0_"), "f(Pair *, Pair *)");
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for bad in [
            "vadd",
            "_Z",
            "_Z4vad",
            "_Z4vaddPKfS9_",
            "_Z1fPFviE",
            "_Z1fT_",
            "_Z4vaddi!",
        ] {
            assert!(demangle(bad).is_err(), "{bad}");
        }
    }
}
