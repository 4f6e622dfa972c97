//! The kernel declarations nvcc's front end prints in its host code
//! (`nvcc -cuda`), with their parameters' names and contract attributes.
//!
//! The front end prints the program again in its own spelling: namespaces
//! as `namespace ns { ... }` (an anonymous one under the `_GLOBAL__N_...`
//! name it also mangles into its kernels' names),
//! `extern "C"` where it was written, and for each kernel a declaration
//! of a form no other function gets:
//!
//! - a kernel that is no template: `__attribute__((visibility("hidden")))
//!   void name(params) ;` (without the attribute in an anonymous
//!   namespace), once for each declaration in the source;
//! - a kernel template: `template< class T> static void name(params)
//!   {__wrapper__device_stub_name<T>(...);return;}`;
//! - an explicit specialization of one: `template<> void name< args>
//!   (params) {__wrapper__device_stub_name<args>(...);return;}`.
//!
//! `__device__` functions are printed with a body that calls `::exit`,
//! host functions with their own; explicit instantiations (`template void
//! name< float> (...);`) repeat the template's attributes, and the
//! template is what they are looked up by. Only the three forms above are
//! kept, each with the namespaces around it. A host function's prototype
//! looks like a kernel's; it cannot share a kernel's name and parameters,
//! so at worst it makes a kernel's name look overloaded, and the lookup
//! then takes no contract.

/// What a printed declaration declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A kernel that is no template.
    Kernel,
    /// A kernel template.
    Template,
    /// An explicit specialization of a kernel template.
    Specialization,
}

/// A kernel declaration as nvcc printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Declaration {
    pub kind: Kind,
    /// `ns::k` (an anonymous namespace by the name nvcc gives it), the
    /// template arguments of a specialization after it without spaces:
    /// `ns::sc<double>`.
    pub name: String,
    pub extern_c: bool,
    pub params: Vec<Param>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Param {
    /// Its name (`__T0` for one the source left unnamed); empty where the
    /// printed text could not be read as a parameter.
    pub name: String,
    /// Its type as printed, without spaces: what tells overloads apart.
    pub ty: String,
    /// `("writes", "n")` of `MEMPLAN_WRITES(n)`; a second one on the same
    /// parameter is kept too, for the error it is.
    pub markers: Vec<(String, String)>,
}

impl Param {
    pub fn has_marker(&self) -> bool {
        !self.markers.is_empty()
    }
}

/// What a `{` opened.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Scope {
    Namespace(String),
    ExternC,
    ExternCpp,
    /// A function body, a class, an initializer: nothing in it is a
    /// kernel declaration.
    Other,
}

/// Every kernel declaration in `code` (nvcc's host code, line markers
/// removed). Reads string and character literals as such, so that an
/// extent's parentheses and commas are its own.
pub(super) fn declarations(code: &str) -> Vec<Declaration> {
    let bytes = code.as_bytes();
    let mut scopes: Vec<Scope> = Vec::new();
    let mut statement = 0;
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                at = literal_end(bytes, at);
                continue;
            }
            b'{' => {
                scopes.push(scope_of(code[statement..at].trim()));
                statement = at + 1;
            }
            b'}' => {
                scopes.pop();
                statement = at + 1;
            }
            b';' => statement = at + 1,
            b'(' if !scopes.contains(&Scope::Other) => {
                let Some(close) = matching(code, at) else {
                    break;
                };
                if let Some(declaration) = declaration(code, statement, at, close, &scopes) {
                    found.push(declaration);
                }
                at = close + 1;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    found
}

/// What the `{` after `head` opens.
fn scope_of(head: &str) -> Scope {
    if head == "extern \"C\"" {
        return Scope::ExternC;
    }
    if head == "extern \"C++\"" {
        return Scope::ExternCpp;
    }
    let head = head.strip_prefix("inline ").unwrap_or(head);
    let Some(rest) = head.strip_prefix("namespace ") else {
        return Scope::Other;
    };
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        Scope::Other
    } else {
        Scope::Namespace(name)
    }
}

/// The kernel declaration whose parameter list is `open..=close`, the
/// statement it is in starting at `statement`; `None` for anything else.
fn declaration(
    code: &str,
    statement: usize,
    open: usize,
    close: usize,
    scopes: &[Scope],
) -> Option<Declaration> {
    let prefix = &code[statement..open];
    let (name, name_start) = name_before(prefix)?;
    // `__attribute__`, nvcc's own stubs and helpers; names with two
    // leading underscores are the implementation's.
    if name.starts_with("__") {
        return None;
    }
    let head = prefix[..name_start].trim();
    let after = code[close + 1..].trim_start();
    let body = if after.starts_with(';') {
        None
    } else if after.starts_with('{') {
        let start = code.len() - after.len();
        Some(&code[start..=matching_brace(code, start)?])
    } else {
        return None;
    };
    let calls_wrapper = body.is_some_and(|body| body.contains("__wrapper__device_stub_"));
    let kind = if head.starts_with("template<>") && name.contains('<') && calls_wrapper {
        Kind::Specialization
    } else if head.starts_with("template<") && calls_wrapper {
        Kind::Template
    } else if !head.starts_with("template") && body.is_none() && head.ends_with("void") {
        Kind::Kernel
    } else {
        return None;
    };
    // A name written qualified (`ns::k`, an out-of-line definition) is
    // qualified from the top, `::k` from the global namespace.
    let mut qualified: Vec<&str> = if name.starts_with("::") {
        Vec::new()
    } else {
        scopes
            .iter()
            .filter_map(|scope| match scope {
                Scope::Namespace(name) => Some(name.as_str()),
                _ => None,
            })
            .collect()
    };
    qualified.push(name.trim_start_matches("::"));
    // The innermost linkage block decides, unless the declaration says.
    let block_c = scopes
        .iter()
        .rev()
        .find_map(|scope| match scope {
            Scope::ExternC => Some(true),
            Scope::ExternCpp => Some(false),
            _ => None,
        })
        .unwrap_or(false);
    Some(Declaration {
        kind,
        name: qualified.join("::"),
        extern_c: block_c || head.starts_with("extern \"C\""),
        params: split_params(&code[open + 1..close])
            .iter()
            .map(|text| param(text))
            .collect(),
    })
}

/// The function name at the end of `prefix`, qualified as written
/// (`ns::k`), template arguments without spaces (`sc<double>` of `sc<
/// double> `), and where it starts.
fn name_before(prefix: &str) -> Option<(String, usize)> {
    let mut end = prefix.trim_end().len();
    let mut arguments = String::new();
    if prefix[..end].ends_with('>') {
        let mut depth = 0;
        let (start, _) = prefix[..end].char_indices().rev().find(|&(_, c)| {
            match c {
                '>' => depth += 1,
                '<' => depth -= 1,
                _ => {}
            }
            depth == 0
        })?;
        arguments = prefix[start..end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        end = prefix[..start].trim_end().len();
    }
    let start = prefix[..end]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .map_or(0, |i| i + 1);
    let name = &prefix[start..end];
    let last = name.rsplit("::").next().unwrap_or(name);
    let is_identifier = last
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    is_identifier.then(|| (format!("{name}{arguments}"), start))
}

/// The parameters of a list, as text, split at its own commas. Angle
/// brackets enclose template arguments in a parameter's type, but are
/// operators in its default argument (after a `=` of its own), where
/// counting them would split the list wrongly.
fn split_params(list: &str) -> Vec<String> {
    let bytes = list.as_bytes();
    let mut params = Vec::new();
    let mut depth = 0usize;
    let mut angles = 0usize;
    let mut default = false;
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                at = literal_end(bytes, at);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'<' if !default => angles += 1,
            b'>' if !default => angles = angles.saturating_sub(1),
            b'=' if depth == 0 && angles == 0 => default = true,
            b',' if depth == 0 && angles == 0 => {
                params.push(list[start..at].trim().to_owned());
                start = at + 1;
                default = false;
            }
            _ => {}
        }
        at += 1;
    }
    let last = list[start..].trim();
    if !last.is_empty() || !params.is_empty() {
        params.push(last.to_owned());
    }
    params
}

/// One parameter's name, type and marker, from its text:
/// `__attribute((annotate("memplan:reads:n" ))) const float * in`.
fn param(text: &str) -> Param {
    let mut markers = Vec::new();
    let mut rest = text.to_owned();
    // Attributes (the marker among them), then `[[...]]` specifiers.
    while let Some(at) = rest.find("__attribute") {
        let Some(open) = rest[at..].find('(').map(|i| at + i) else {
            break;
        };
        let Some(close) = matching(&rest, open) else {
            break;
        };
        if let Some(found) = rest[open..close].find("\"memplan:") {
            let literal = &rest[open + found..close];
            let end = literal_end(literal.as_bytes(), 0);
            let body = literal[1..end.saturating_sub(1).max(1)].trim_start_matches("memplan:");
            if let Some((word, extent)) = body.split_once(':') {
                markers.push((word.to_owned(), extent.trim().to_owned()));
            }
        }
        rest.replace_range(at..=close, " ");
    }
    while let (Some(open), Some(close)) = (rest.find("[["), rest.find("]]")) {
        if close < open {
            break;
        }
        rest.replace_range(open..close + 2, " ");
    }
    // A default argument is not the parameter's.
    if let Some(equals) = depth_zero_equals(&rest) {
        rest.truncate(equals);
    }
    // The name is the last identifier, before any array brackets.
    let declarator = match rest.find('[') {
        Some(bracket) => &rest[..bracket],
        None => &rest,
    };
    let name_end = declarator.trim_end().len();
    let name_start = declarator[..name_end]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = declarator[name_start..name_end].to_owned();
    let ty = format!("{}{}", &declarator[..name_start], &rest[declarator.len()..])
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let readable = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    Param {
        name: if readable { name } else { String::new() },
        ty,
        markers,
    }
}

/// Where a `=` outside any brackets is.
fn depth_zero_equals(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => return Some(at),
            _ => {}
        }
    }
    None
}

/// The position just past the string or character literal at `start`.
pub(super) fn literal_end(bytes: &[u8], start: usize) -> usize {
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

/// The position of the parenthesis closing the one at `open`.
pub(super) fn matching(text: &str, open: usize) -> Option<usize> {
    closing(text, open, b'(', b')')
}

fn matching_brace(text: &str, open: usize) -> Option<usize> {
    closing(text, open, b'{', b'}')
}

fn closing(text: &str, open: usize, left: u8, right: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                at = literal_end(bytes, at);
                continue;
            }
            byte if byte == left => depth += 1,
            byte if byte == right => {
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
pub(super) mod tests {
    use super::*;

    /// nvcc 13.0's host code for the cases that must be told apart (line
    /// markers removed): namespaces, a template, its instance and two
    /// specializations, a `__device__` and a host function with markers, a
    /// default argument, `extern "C"` blocks, an anonymous namespace.
    pub(crate) const HOST_CODE: &str = r#"
namespace a { __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:n" ))) const float *p, int n) ;
}
namespace b { __attribute__((visibility("hidden"))) void k(float *p, int n) ;
}
template< class T> static void __wrapper__device_stub_fill(__attribute((annotate("memplan:writes:n" ))) T *&out, int &n) { ::cudaLaunchKernel(0, 0, 0, 0, 0, 0);}
template< class T> static void fill(__attribute((annotate("memplan:writes:n" ))) T *out, int n) {__wrapper__device_stub_fill<T>(out,n);return;}
template void fill< float> (
__attribute((annotate("memplan:writes:n" ))) float * out, int n);
__attribute__((visibility("hidden"))) void fill(float *out, int n) ;
template< class T> static void sc(__attribute((annotate("memplan:reads:n" ))) const T *in, __attribute((annotate("memplan:writes:n" ))) T *out, int n) {__wrapper__device_stub_sc<T>(in,out,n);return;}
template<> void __wrapper__device_stub_sc< double> (const double *&in, double *&out, int &n) ;
template<> void sc< double> (const double *in, double *out, int n) {__wrapper__device_stub_sc<double>(in,out,n);return;}
template<> void sc< int> (__attribute((annotate("memplan:reads:2 * n" ))) const int *in, __attribute((annotate("memplan:writes:2 * n" ))) int *out, int n) {__wrapper__device_stub_sc<int>(in,out,n);return;}
namespace util { __attribute__((unused)) void touch(__attribute((annotate("memplan:reads:1" ))) const float *p, int n) {int volatile ___ = 1;(void)p;(void)n;::exit(___);}
}
__attribute__((visibility("hidden"))) void touch(float *p, int n) ;
void host_fn(__attribute((annotate("memplan:reads:1" ))) const float *p, int n) { }
extern "C" __attribute__((visibility("hidden"))) void dflt(__attribute((annotate("memplan:writes:n" ))) float *p, int n = 4) ;
extern "C" {__attribute__((visibility("hidden"))) void inblock(__attribute((annotate("memplan:writes:(n + 1) / 2" ))) float *p, [[maybe_unused]] int n) ;
}
namespace _GLOBAL__N__6b6042f2_4_d_cu_466c3b0d __attribute__((visibility("hidden"))) { void anon(__attribute((annotate("memplan:writes:n" ))) float *p, int n) ;
}
"#;

    fn names(declarations: &[Declaration]) -> Vec<(Kind, &str, bool)> {
        declarations
            .iter()
            .map(|d| (d.kind, d.name.as_str(), d.extern_c))
            .collect()
    }

    #[test]
    fn keeps_kernels_only_each_with_its_namespaces() {
        let found = declarations(HOST_CODE);
        assert_eq!(
            names(&found),
            [
                (Kind::Kernel, "a::k", false),
                (Kind::Kernel, "b::k", false),
                (Kind::Template, "fill", false),
                (Kind::Kernel, "fill", false),
                (Kind::Template, "sc", false),
                (Kind::Specialization, "sc<double>", false),
                (Kind::Specialization, "sc<int>", false),
                (Kind::Kernel, "touch", false),
                (Kind::Kernel, "dflt", true),
                (Kind::Kernel, "inblock", true),
                (
                    Kind::Kernel,
                    "_GLOBAL__N__6b6042f2_4_d_cu_466c3b0d::anon",
                    false
                ),
            ]
        );
    }

    #[test]
    fn parameters_have_their_names_types_and_markers() {
        let found = declarations(HOST_CODE);
        let a = &found[0];
        assert_eq!(a.params[0].name, "p");
        assert_eq!(a.params[0].ty, "constfloat*");
        assert_eq!(a.params[0].markers, [("reads".into(), "n".into())]);
        assert!(a.params[1].markers.is_empty());
        let dflt = &found[8];
        assert_eq!(
            dflt.params[1].name, "n",
            "the default argument is not the name"
        );
        assert_eq!(dflt.params[1].ty, "int");
        let inblock = &found[9];
        assert_eq!(inblock.params[1].name, "n");
        assert_eq!(
            inblock.params[0].markers,
            [("writes".into(), "(n + 1) / 2".into())]
        );
    }

    #[test]
    fn default_arguments_with_angles_and_commas_keep_the_names_in_place() {
        let list = "const float *in, int w = (lim > 1, 0), int n = 4, int big = lim < 2, float *out = nullptr";
        let names: Vec<String> = split_params(list).iter().map(|p| param(p).name).collect();
        assert_eq!(names, ["in", "w", "n", "big", "out"]);
        let typed = "Pair<int, float> p, int n";
        let names: Vec<String> = split_params(typed).iter().map(|p| param(p).name).collect();
        assert_eq!(names, ["p", "n"]);
    }

    #[test]
    fn a_name_qualified_at_its_definition_is_qualified_from_the_top() {
        let code = r#"namespace ns { __attribute__((visibility("hidden"))) void k(float *p, int n) ;
}
template<> void ns::sc< int> (int *out, int n) {__wrapper__device_stub_sc<int>(out,n);return;}
extern "C" { extern "C++" { __attribute__((visibility("hidden"))) void inner(float *p, int n) ; } }"#;
        assert_eq!(
            names(&declarations(code)),
            [
                (Kind::Kernel, "ns::k", false),
                (Kind::Specialization, "ns::sc<int>", false),
                (Kind::Kernel, "inner", false),
            ]
        );
    }

    #[test]
    fn nested_and_inline_namespaces_qualify_the_name() {
        let code = r#"namespace outer { inline namespace v1 { __attribute__((visibility("hidden"))) void k(float *p, int n) ;
} }"#;
        assert_eq!(
            names(&declarations(code)),
            [(Kind::Kernel, "outer::v1::k", false)]
        );
    }
}
