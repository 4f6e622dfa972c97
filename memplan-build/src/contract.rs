//! Kernel contracts: what `memplan.cuh`'s `MEMPLAN_READS(n)` and its kin
//! say about a kernel's pointer parameters, read back from nvcc.
//!
//! Under memplan-build the macros become `annotate` attributes, which nvcc's
//! front end keeps on the parameters when it writes its host code (`nvcc
//! -cuda`): it prints every kernel's declaration again, in its own spelling,
//! with the attribute on the parameter it was written before and with the
//! parameters' names. This module finds those declarations (any parameter
//! list with a `memplan:` attribute), ties each to the registered kernel of
//! its name and parameter count, and checks the contract against the
//! parameter types the mangled name gives: a contract sits on a pointer,
//! what the kernel writes is not `const`, and an extent names integer
//! parameters of the same kernel.

use crate::demangle::{Builtin, CType, Function};

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

/// A kernel's contracts, from the declaration that states them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelContracts {
    /// The parameters' names there (`__T0` for an unnamed one).
    pub names: Vec<String>,
    /// Each parameter's contract, if it has one.
    pub params: Vec<Option<Contract>>,
}

/// A declaration as nvcc printed it, with a contract on some parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Declaration {
    /// As printed, without spaces: `vadd`, `scaled<float>`, `scaled` (the
    /// template itself).
    name: String,
    params: Vec<Param>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Param {
    /// The parameter's name (`__T0` for an unnamed one).
    name: String,
    /// `("writes", "n")` of `MEMPLAN_WRITES(n)`.
    marker: Option<(String, String)>,
}

/// The contracts of every declaration in `host_code` (nvcc's `-cuda`
/// output, line markers removed) that has one.
pub struct Contracts(Vec<Declaration>);

impl Contracts {
    pub fn read(host_code: &str) -> Contracts {
        Contracts(declarations(host_code))
    }

    /// The contract of each parameter of `function`, the kernel `symbol`;
    /// `Ok(None)` for a kernel without any. An error is the build's: a
    /// contract that cannot be true of the kernel, or two that disagree.
    pub fn of(&self, function: &Function) -> Result<Option<KernelContracts>, String> {
        // nvcc prints the name unqualified, inside its namespace's block.
        let (qualified, arguments) = function
            .name
            .split_at(function.name.find('<').unwrap_or(function.name.len()));
        let template = qualified.rsplit("::").next().unwrap_or(qualified);
        let name: String = format!("{template}{arguments}")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let mut found: Option<KernelContracts> = None;
        for declaration in &self.0 {
            if declaration.params.len() != function.params.len()
                || (declaration.name != name && declaration.name != template)
            {
                continue;
            }
            let contracts = read_declaration(declaration, function)?;
            match &found {
                Some(earlier) if earlier.params != contracts.params => {
                    return Err(format!(
                        "`{}` is declared twice with different contracts (or overloads of it \
                         with {} parameters have different ones, which memplan cannot tell \
                         apart): state one contract, or give the kernels different names",
                        function.name,
                        function.params.len()
                    ));
                }
                _ => found = Some(contracts),
            }
        }
        Ok(found)
    }
}

/// The contracts of one declaration, checked against the kernel's types.
fn read_declaration(
    declaration: &Declaration,
    function: &Function,
) -> Result<KernelContracts, String> {
    let kernel = &function.name;
    let names: Vec<&str> = declaration.params.iter().map(|p| p.name.as_str()).collect();
    let mut contracts = Vec::with_capacity(names.len());
    for (param, ty) in declaration.params.iter().zip(&function.params) {
        let Some((word, text)) = &param.marker else {
            contracts.push(None);
            continue;
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
        let program = parse_extent(text, &names).map_err(|why| format!("{what}: {why}"))?;
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
    Ok(KernelContracts {
        names: names.iter().map(|name| (*name).to_owned()).collect(),
        params: contracts,
    })
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

const EXTENT_HELP: &str = "an extent is written with integers, the kernel's integer \
                           parameters, `+ - * / %` and parentheses: `n`, `rows * cols`";

/// `text` in postfix order, each name the position of a parameter of
/// `names`. Precedence and associativity are C's (and Rust's).
pub fn parse_extent(text: &str, names: &[&str]) -> Result<Vec<Term>, String> {
    let tokens = tokens(text)?;
    if tokens.is_empty() {
        return Err(format!("the extent is empty\nhelp: {EXTENT_HELP}"));
    }
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        names,
        out: Vec::new(),
        depth: 0,
    };
    parser.sum()?;
    if parser.at != tokens.len() {
        return Err(format!(
            "memplan cannot read the extent `{text}`\nhelp: {EXTENT_HELP}"
        ));
    }
    Ok(parser.out)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Int(u64),
    Name(String),
    Op(char),
}

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c.is_whitespace() {
            at += 1;
        } else if c.is_ascii_digit() {
            let start = at;
            while at < chars.len() && (chars[at].is_ascii_alphanumeric() || chars[at] == '\'') {
                at += 1;
            }
            let literal: String = chars[start..at].iter().filter(|&&c| c != '\'').collect();
            tokens.push(Token::Int(integer(&literal)?));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = at;
            while at < chars.len() && (chars[at].is_ascii_alphanumeric() || chars[at] == '_') {
                at += 1;
            }
            tokens.push(Token::Name(chars[start..at].iter().collect()));
        } else if "+-*/%()".contains(c) {
            tokens.push(Token::Op(c));
            at += 1;
        } else {
            return Err(format!(
                "`{c}` has no place in an extent\nhelp: {EXTENT_HELP}"
            ));
        }
    }
    Ok(tokens)
}

/// A C integer literal: decimal, hex, octal or binary, with any of the
/// suffixes `u`, `l`, `ll`.
fn integer(literal: &str) -> Result<u64, String> {
    let digits = literal.trim_end_matches(['u', 'U', 'l', 'L']);
    let lower = digits.to_ascii_lowercase();
    let parsed = if let Some(hex) = lower.strip_prefix("0x") {
        u64::from_str_radix(hex, 16)
    } else if let Some(binary) = lower.strip_prefix("0b") {
        u64::from_str_radix(binary, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        u64::from_str_radix(&lower[1..], 8)
    } else {
        lower.parse()
    };
    parsed.map_err(|_| format!("`{literal}` is not an integer memplan can read"))
}

/// How deep an extent may nest; deeper ones are refused, not recursed into.
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    names: &'a [&'a str],
    out: Vec<Term>,
    depth: usize,
}

impl Parser<'_> {
    fn sum(&mut self) -> Result<(), String> {
        self.product()?;
        while let Some(op @ ('+' | '-')) = self.op() {
            self.at += 1;
            self.product()?;
            self.out.push(if op == '+' { Term::Add } else { Term::Sub });
        }
        Ok(())
    }

    fn product(&mut self) -> Result<(), String> {
        self.factor()?;
        while let Some(op @ ('*' | '/' | '%')) = self.op() {
            self.at += 1;
            self.factor()?;
            self.out.push(match op {
                '*' => Term::Mul,
                '/' => Term::Div,
                _ => Term::Rem,
            });
        }
        Ok(())
    }

    fn factor(&mut self) -> Result<(), String> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        match token {
            Some(Token::Int(value)) => self.out.push(Term::Literal(value)),
            Some(Token::Name(name)) => {
                let index = self.names.iter().position(|n| *n == name).ok_or_else(|| {
                    format!(
                        "the extent names `{name}`, which is not a parameter of the kernel\n\
                         help: {EXTENT_HELP}"
                    )
                })?;
                self.out.push(Term::Param(index));
            }
            Some(Token::Op('(')) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(format!("an extent nested more than {MAX_DEPTH} deep"));
                }
                self.sum()?;
                self.depth -= 1;
                if self.op() != Some(')') {
                    return Err(format!(
                        "an unclosed `(` in the extent\nhelp: {EXTENT_HELP}"
                    ));
                }
                self.at += 1;
            }
            _ => {
                return Err(format!(
                    "memplan cannot read the extent\nhelp: {EXTENT_HELP}"
                ));
            }
        }
        Ok(())
    }

    fn op(&self) -> Option<char> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(*op),
            _ => None,
        }
    }
}

/// Every parameter list in `code` with a `memplan:` attribute in it, with
/// the name printed before it. Reads string and character literals as
/// such, so that an extent's parentheses and commas are its own.
fn declarations(code: &str) -> Vec<Declaration> {
    const MARKER: &str = "\"memplan:";
    let bytes = code.as_bytes();
    // Open brackets, as (byte, position); and the lists found.
    let mut open: Vec<(u8, usize)> = Vec::new();
    let mut lists: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            quote @ (b'"' | b'\'') => {
                if quote == b'"' && code[at..].starts_with(MARKER) {
                    // `name(__attribute((annotate("memplan:...` : the list
                    // is the fourth bracket out.
                    if let Some(&(b'(', list)) = open.len().checked_sub(4).map(|i| &open[i])
                        && !lists.contains(&list)
                    {
                        lists.push(list);
                    }
                }
                at = literal_end(bytes, at);
                continue;
            }
            b'(' | b'[' | b'{' => open.push((bytes[at], at)),
            b')' | b']' | b'}' => {
                open.pop();
            }
            _ => {}
        }
        at += 1;
    }
    lists
        .into_iter()
        .filter_map(|list| declaration(code, list))
        .filter(|d| {
            !d.name.starts_with("__wrapper__device_stub_") && !d.name.starts_with("__device_stub_")
        })
        .collect()
}

/// The position just past the string or character literal at `start`.
fn literal_end(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            byte if byte == quote => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The declaration whose parameter list opens at `list`.
fn declaration(code: &str, list: usize) -> Option<Declaration> {
    let name = name_before(&code[..list])?;
    let params = split_params(code, list)?
        .into_iter()
        .map(|text| param(&text))
        .collect();
    Some(Declaration { name, params })
}

/// The function name just before a parameter list: `vadd`, or
/// `scaled<float>` of `scaled< float> `.
fn name_before(code: &str) -> Option<String> {
    let mut end = code.trim_end().len();
    let mut template = String::new();
    if code[..end].ends_with('>') {
        let mut depth = 0;
        let start = code[..end].char_indices().rev().find(|&(_, c)| {
            match c {
                '>' => depth += 1,
                '<' => depth -= 1,
                _ => {}
            }
            depth == 0
        })?;
        template = code[start.0..end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        end = code[..start.0].trim_end().len();
    }
    let start = code[..end]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &code[start..end];
    (!name.is_empty()).then(|| format!("{name}{template}"))
}

/// The parameters of the list that opens at `list`, as text, split at its
/// own commas.
fn split_params(code: &str, list: usize) -> Option<Vec<String>> {
    let bytes = code.as_bytes();
    let mut params = Vec::new();
    let mut depth = 0usize;
    let mut start = list + 1;
    let mut at = list + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                at = literal_end(bytes, at);
                continue;
            }
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' if depth == 0 => {
                let last = code[start..at].trim();
                if !last.is_empty() || !params.is_empty() {
                    params.push(last.to_owned());
                }
                return Some(params);
            }
            b')' | b']' | b'}' | b'>' => depth = depth.checked_sub(1)?,
            b',' if depth == 0 => {
                params.push(code[start..at].trim().to_owned());
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// One parameter's name and marker, from its text:
/// `__attribute((annotate("memplan:reads:n" ))) const float * in`.
fn param(text: &str) -> Param {
    let mut marker = None;
    let mut rest = text.to_owned();
    while let Some(at) = rest.find("__attribute") {
        let Some(open) = rest[at..].find('(').map(|i| at + i) else {
            break;
        };
        let Some(close) = matching(&rest, open) else {
            break;
        };
        let attribute = &rest[open..=close];
        if let Some(found) = attribute.find("\"memplan:") {
            let literal = &attribute[found..];
            let end = literal_end(literal.as_bytes(), 0);
            // Between the quotes, after `memplan:`.
            let body =
                &literal[1 + "memplan:".len()..end.saturating_sub(1).max(1 + "memplan:".len())];
            if let Some((word, extent)) = body.split_once(':') {
                marker = Some((word.to_owned(), extent.trim().to_owned()));
            }
        }
        rest.replace_range(at..=close, " ");
    }
    // The name is the last identifier, before any array brackets.
    let rest = match rest.find('[') {
        Some(bracket) => &rest[..bracket],
        None => &rest,
    };
    let name = rest
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|word| !word.is_empty())
        .unwrap_or_default()
        .to_owned();
    Param { name, marker }
}

/// The position of the bracket closing the one at `open`.
fn matching(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                at = literal_end(bytes, at);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demangle::demangle;

    /// nvcc 13.0's host code for a file with contracts, as far as this reads
    /// it (line markers already removed).
    const HOST_CODE: &str = r#"
extern "C" __attribute__((visibility("hidden"))) void vadd(__attribute((annotate("memplan:reads:n" ))) const float *a, __attribute((annotate("memplan:reads:n" ))) const float *b,
__attribute((annotate("memplan:writes:n" ))) float *c, int n) ;
template< class T> static void
__wrapper__device_stub_scaled(__attribute((annotate("memplan:reads:n" ))) const T *&in, __attribute((annotate("memplan:writes:(n + 1) / 2 * 16" ))) T *&out, T &factor, int &n) { ::cudaLaunchKernel(0, 0, 0, 0, 0, 0);}
template< class T> static void
scaled(__attribute((annotate("memplan:reads:n" ))) const T *in, __attribute((annotate("memplan:writes:(n + 1) / 2 * 16" ))) T *out, T factor, int n) {__wrapper__device_stub_scaled<T>(in,out,factor,n);return;}
template void scaled< float> (
__attribute((annotate("memplan:reads:n" ))) const float * in, __attribute((annotate("memplan:writes:(n + 1) / 2 * 16" ))) float * out, float factor, int n);
extern "C" __attribute__((visibility("hidden"))) void lay(__attribute((annotate("memplan:updates:n" ))) float4 *v, __attribute((annotate("memplan:atomic:1" ))) unsigned long long *sum, Window w, ns::Pair p, size_t n) ;
extern "C" __attribute__((visibility("hidden"))) void plain(const float *__T0, int __T1) ;
"#;

    fn contracts(mangled: &str, name: &str) -> Result<Option<Vec<Option<Contract>>>, String> {
        let mut function = demangle(mangled).unwrap();
        function.name = name.to_owned();
        Ok(Contracts::read(HOST_CODE)
            .of(&function)?
            .map(|found| found.params))
    }

    fn summary(contracts: &[Option<Contract>]) -> Vec<Option<(Access, &str)>> {
        contracts
            .iter()
            .map(|c| c.as_ref().map(|c| (c.access, c.text.as_str())))
            .collect()
    }

    #[test]
    fn reads_each_parameters_contract() {
        let vadd = contracts("_Z4vaddPKfS0_Pfi", "vadd").unwrap().unwrap();
        assert_eq!(
            summary(&vadd),
            [
                Some((Access::Reads, "n")),
                Some((Access::Reads, "n")),
                Some((Access::Writes, "n")),
                None
            ]
        );
        assert_eq!(vadd[2].as_ref().unwrap().program, [Term::Param(3)]);
        let lay = contracts("_Z3layP6float4Py6WindowN2ns4PairEm", "lay")
            .unwrap()
            .unwrap();
        assert_eq!(lay[1].as_ref().unwrap().access, Access::Atomic);
        assert_eq!(lay[1].as_ref().unwrap().program, [Term::Literal(1)]);
    }

    #[test]
    fn a_template_instance_has_its_templates_contract() {
        let scaled = contracts("_Z6scaledIfEvPKT_PS0_S0_i", "scaled<float>")
            .unwrap()
            .unwrap();
        use Term::*;
        assert_eq!(
            scaled[1].as_ref().unwrap().program,
            [Param(3), Literal(1), Add, Literal(2), Div, Literal(16), Mul]
        );
    }

    #[test]
    fn kernels_without_contracts_have_none() {
        assert_eq!(contracts("_Z5plainPKfi", "plain"), Ok(None));
    }

    #[test]
    fn contracts_that_cannot_be_true_are_build_errors() {
        let code = r#"void bad(__attribute((annotate("memplan:writes:n" ))) const float *a, int n) ;
void value(__attribute((annotate("memplan:reads:1" ))) int a, int n) ;
void names(__attribute((annotate("memplan:reads:m" ))) const float *a, int n) ;
void floats(__attribute((annotate("memplan:reads:x" ))) const float *a, float x) ;"#;
        let read = Contracts::read(code);
        let error = |mangled: &str, name: &str| {
            let mut function = demangle(mangled).unwrap();
            function.name = name.to_owned();
            read.of(&function).unwrap_err()
        };
        assert!(error("_Z3badPKfi", "bad").contains("cannot write through a `const float *`"));
        assert!(error("_Z5valueii", "value").contains("is a `int`"));
        assert!(error("_Z5namesPKfi", "names").contains("names `m`, which is not a parameter"));
        assert!(error("_Z6floatsPKff", "floats").contains("names `x`, a `float`"));
    }

    #[test]
    fn extents_follow_cs_precedence() {
        use Term::*;
        let names = ["a", "b", "c"];
        assert_eq!(
            parse_extent("a - b - c", &names).unwrap(),
            [Param(0), Param(1), Sub, Param(2), Sub]
        );
        assert_eq!(
            parse_extent("a + b * c", &names).unwrap(),
            [Param(0), Param(1), Param(2), Mul, Add]
        );
        assert_eq!(
            parse_extent("(a + b) % 0x10u", &names).unwrap(),
            [Param(0), Param(1), Add, Literal(16), Rem]
        );
        for bad in ["", "a +", "(a", "a b", "a << 2", "f(a)", "a ? b : c"] {
            assert!(parse_extent(bad, &names).is_err(), "{bad}");
        }
        let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
        assert!(parse_extent(&deep, &names).is_err());
    }
}
