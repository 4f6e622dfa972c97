//! The functions nvcc's front end prints in its host code (`nvcc -cuda`),
//! with their parameters' names and contract attributes.
//!
//! The front end prints the program again in its own spelling: each
//! declaration at namespace scope in its namespaces, with the attribute of
//! a contract on the parameter it was written before; for each kernel its
//! declarations as written (a template's with a body that calls
//! `__wrapper__device_stub_name<T>`), and a host definition that calls the
//! kernel's stub, `__device_stub__` and the kernel's mangled name, or, for
//! a template's instance, `__wrapper__device_stub_name<args>` that does.
//! Those calls tie a registered kernel to the name the front end prints for
//! it: its anchor. [`Printed`] is every declaration at namespace scope,
//! whatever it declares; the lookup ([`super`]) decides which are the
//! kernel's, and takes none where it cannot tell.

/// A function declaration or definition printed at namespace scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Printed {
    /// The name as printed, qualified by the namespaces around it (an
    /// anonymous one by the name nvcc gives it), template arguments
    /// without spaces: `ns::k`, `ns::sc<double>`.
    pub name: String,
    /// What tells one entity of that name from another: its template head,
    /// return type, parameter types and what follows them, without names,
    /// attributes, storage words or spaces.
    pub key: String,
    /// `template void name< float>(...);`, which declares nothing new.
    pub instantiation: bool,
    pub extern_c: bool,
    /// The mangled name of the stub its body calls (`_Z4vaddPKfS0_Pfi` of
    /// `{__device_stub__Z4vaddPKfS0_Pfi( __cuda_0,__cuda_1); }`), where the
    /// body is that call and nothing else, as nvcc writes it: it is that
    /// kernel's host definition, or the wrapper of that template instance.
    pub stub_call: Option<String>,
    /// For a kernel template, the arguments its body passes to its wrapper
    /// (`{__wrapper__device_stub_k<T>(q,m,n);return;}`): its parameters'
    /// names in order, as nvcc reads them.
    pub wrapper_args: Option<Vec<String>>,
    pub params: Vec<Param>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Param {
    /// Its name; empty for an unnamed one, or where the printed text could
    /// not be read as a parameter.
    pub name: String,
    /// Its type as printed, without spaces or elaborating words
    /// (`struct`): `::S*` and `S*` stay apart, as nvcc prints them apart
    /// where they are two types. In nvcc's own host definitions, a class
    /// it prints mangled (`_ZN2ns4PairE`) reads as its name.
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

impl Printed {
    /// The name without namespaces or template arguments: `k` of
    /// `ns::k<int>`; for a template instance's wrapper, the template's.
    pub fn base(&self) -> &str {
        let name = self.name.split('<').next().unwrap_or(&self.name);
        let name = name.rsplit("::").next().unwrap_or(name);
        name.strip_prefix(WRAPPER).unwrap_or(name)
    }

    pub fn has_marker(&self) -> bool {
        self.params.iter().any(Param::has_marker)
    }
}

/// The stub a body calls, where the body is nvcc's: the one call of
/// `__device_stub_` and a mangled name, on `__cuda_` arguments (cast, in
/// a wrapper), with no literal and no other statement.
fn stub_called(body: &str) -> Option<String> {
    let body = squeeze(body);
    let call = body.strip_prefix("{")?.strip_suffix(";}")?;
    let called = call.strip_prefix(STUB)?;
    let end = called.find('(')?;
    let (mangled, arguments) = called.split_at(end);
    let plain = mangled.starts_with("_Z") && mangled.chars().all(ident);
    let only_parameters = !arguments.contains(['"', '\'', ';', '{', '}'])
        && arguments.matches("__cuda_").count() == arguments.matches(',').count() + 1
        || arguments == "()";
    (plain && only_parameters).then(|| mangled.to_owned())
}

/// The arguments of a kernel template's call of its wrapper, where the
/// body is nvcc's: `{__wrapper__device_stub_k<T>(q,m,n);return;}`.
fn wrapper_arguments(body: &str) -> Option<Vec<String>> {
    let body = squeeze(body);
    let call = body.strip_prefix("{")?.strip_suffix(";return;}")?;
    let call = call.strip_prefix(WRAPPER)?;
    let open = call.find('(')?;
    let arguments = call[open..].strip_prefix('(')?.strip_suffix(')')?;
    if arguments.is_empty() {
        return Some(Vec::new());
    }
    let names: Vec<String> = arguments.split(',').map(str::to_owned).collect();
    names
        .iter()
        .all(|name| !name.is_empty() && name.chars().all(ident))
        .then_some(names)
}

/// The prefix of the wrapper nvcc writes for each kernel template.
pub(super) const WRAPPER: &str = "__wrapper__device_stub_";
const STUB: &str = "__device_stub_";

/// Whether `c` may be in an identifier: nvcc takes `$` too.
fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// What a `{` opened.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Scope {
    Namespace(String),
    ExternC,
    ExternCpp,
    /// A function body, a class, an initializer: no declaration in it is
    /// at namespace scope.
    Other,
}

/// Every function declaration and definition at namespace scope of
/// `code` (nvcc's host code, line markers removed). Reads string and
/// character literals as such, so that an extent's parentheses and commas
/// are its own.
pub(super) fn printed(code: &str) -> Vec<Printed> {
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
                // Past the declaration's trailer (`requires (...)` too),
                // to the `;` or `{` that ends it, which this loop reads.
                let (printed, resume) = declaration(code, statement, at, close, &scopes);
                found.extend(printed);
                at = resume;
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
    match head {
        "extern \"C\"" => return Scope::ExternC,
        "extern \"C++\"" => return Scope::ExternCpp,
        _ => {}
    }
    // `namespace [[deprecated]] ns`, `namespace ns __attribute__((...))`.
    let head = without_attributes(head);
    let head = head.trim();
    let head = head.strip_prefix("inline ").unwrap_or(head);
    let Some(rest) = head.strip_prefix("namespace ") else {
        return Scope::Other;
    };
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|&c| ident(c))
        .collect();
    if name.is_empty() {
        Scope::Other
    } else {
        Scope::Namespace(name)
    }
}

/// The function declaration whose parameter list is `open..=close`, the
/// statement it is in starting at `statement` (`None` for what is none:
/// an attribute's parentheses, a call at namespace scope), and where to go
/// on reading: the `;` or `{` that ends it.
fn declaration(
    code: &str,
    statement: usize,
    open: usize,
    close: usize,
    scopes: &[Scope],
) -> (Option<Printed>, usize) {
    let prefix = &code[statement..open];
    let Some((name, name_start)) = name_before(prefix) else {
        return (None, close + 1);
    };
    let last = name.split('<').next().unwrap_or(&name);
    let last = last.rsplit("::").next().unwrap_or(last);
    // `__attribute__`, `__declspec` and the implementation's own names,
    // but for the template wrappers that anchor template instances: what
    // follows an attribute's parentheses is the declaration, read next.
    if last.starts_with("__") && !last.starts_with(WRAPPER) {
        return (None, close + 1);
    }
    let Some((trailer_end, body)) = trailer_and_body(code, close + 1) else {
        return (None, close + 1);
    };
    let printed = Printed::new(PrintedText {
        name: &name,
        head: prefix[..name_start].trim(),
        params: &code[open + 1..close],
        trailer: &code[close + 1..trailer_end],
        body,
        scopes,
    });
    (Some(printed), trailer_end)
}

/// The parts of a printed declaration, as text.
struct PrintedText<'a> {
    name: &'a str,
    head: &'a str,
    params: &'a str,
    trailer: &'a str,
    body: Option<&'a str>,
    scopes: &'a [Scope],
}

impl Printed {
    fn new(text: PrintedText) -> Printed {
        let PrintedText {
            name,
            head,
            params,
            trailer,
            body,
            scopes,
        } = text;
        let params = split_params(params);
        Printed::from_parts(name, head, &params, trailer, body, scopes)
    }

    fn from_parts(
        name: &str,
        head: &str,
        params: &[String],
        trailer: &str,
        body: Option<&str>,
        scopes: &[Scope],
    ) -> Printed {
        let stub_call = body.and_then(stub_called);
        let wrapper_args = body.and_then(wrapper_arguments);
        let params: Vec<Param> = params.iter().map(|text| param(text)).collect();
        // A name written qualified (`ns::k`, a definition out of its
        // namespace) is qualified from the top, `::k` from the global
        // namespace.
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
        let types: Vec<&str> = params.iter().map(|p| p.ty.as_str()).collect();
        let key = format!("{}|{}|{}", plain(head), types.join(","), squeeze(trailer));
        Printed {
            name: qualified.join("::"),
            key,
            instantiation: head.starts_with("template") && !head.starts_with("template<"),
            extern_c: block_c || head.starts_with("extern \"C\""),
            stub_call,
            wrapper_args,
            params,
        }
    }
}

/// Where the text after a parameter list ends (at a `;`, or a `{` that
/// opens a body), and the body if there is one; `None` where neither
/// follows before a `}` or the end (a call's arguments, an initializer).
fn trailer_and_body(code: &str, from: usize) -> Option<(usize, Option<&str>)> {
    let bytes = code.as_bytes();
    let mut depth = 0usize;
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                at = literal_end(bytes, at);
                continue;
            }
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.checked_sub(1)?,
            b';' | b',' | b'=' if depth == 0 => {
                return (bytes[at] == b';').then_some((at, None));
            }
            b'{' if depth == 0 => {
                // `requires requires { ... }` is a trailer's, not a body.
                let before = code[from..at].trim_end();
                if before.ends_with("requires") {
                    let close = matching_brace(code, at)?;
                    at = close + 1;
                    continue;
                }
                let close = matching_brace(code, at)?;
                return Some((at, Some(&code[at..=close])));
            }
            b'}' if depth == 0 => return None,
            _ => {}
        }
        at += 1;
    }
    None
}

/// `text` without spaces.
fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A declaration's head (template head, return type) without what does
/// not tell entities apart: attributes, storage and linkage words, and
/// spaces.
fn plain(head: &str) -> String {
    let mut rest = head.to_owned();
    while let Some(at) = rest.find("__attribute") {
        let Some(open) = rest[at..].find('(').map(|i| at + i) else {
            break;
        };
        let Some(close) = matching(&rest, open) else {
            break;
        };
        rest.replace_range(at..=close, " ");
    }
    let words: Vec<&str> = rest
        .split_whitespace()
        .filter(|word| {
            !matches!(
                *word,
                "static" | "extern" | "\"C\"" | "\"C++\"" | "inline" | "__inline__"
            )
        })
        .collect();
    squeeze(&words.join(" "))
}

/// The function name at the end of `prefix`, qualified as written
/// (`ns::k`), template arguments without spaces (`sc<double>` of `sc<
/// double> `), and where it starts.
pub(super) fn name_before(prefix: &str) -> Option<(String, usize)> {
    // Attributes between the name and its parameters
    // (`sc< int> __attribute((noinline))`) are not the name's.
    let mut end = prefix.trim_end().len();
    while let Some(start) = trailing_attribute(&prefix[..end]) {
        end = prefix[..start].trim_end().len();
    }
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
        arguments = squeeze(&prefix[start..end]);
        end = prefix[..start].trim_end().len();
    }
    let start = prefix[..end]
        .rfind(|c: char| !(ident(c) || c == ':'))
        .map_or(0, |i| i + 1);
    let name = &prefix[start..end];
    let last = name.rsplit("::").next().unwrap_or(name);
    let is_identifier = last
        .chars()
        .next()
        .is_some_and(|c| ident(c) && !c.is_ascii_digit());
    is_identifier.then(|| (format!("{name}{arguments}"), start))
}

/// Where an attribute that ends `text` starts: `__attribute__((...))`,
/// `__attribute((...))` or `[[...]]`.
fn trailing_attribute(text: &str) -> Option<usize> {
    if let Some(rest) = text.strip_suffix("]]") {
        return rest.rfind("[[");
    }
    if !text.ends_with("))") {
        return None;
    }
    let open = matching_backwards(text, text.len() - 1)?;
    let before = text[..open].trim_end();
    ["__attribute__", "__attribute"]
        .iter()
        .find(|word| before.ends_with(*word))
        .map(|word| before.len() - word.len())
}

/// The position of the `(` that the `)` at `close` closes.
fn matching_backwards(text: &str, close: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = close + 1;
    while at > 0 {
        at -= 1;
        match bytes[at] {
            b')' => depth += 1,
            b'(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` without `__attribute__((...))`, `__attribute((...))` and
/// `[[...]]`.
fn without_attributes(text: &str) -> String {
    let mut rest = text.to_owned();
    while let Some(at) = rest.find("__attribute") {
        let Some(open) = rest[at..].find('(').map(|i| at + i) else {
            break;
        };
        let Some(close) = matching(&rest, open) else {
            break;
        };
        rest.replace_range(at..=close, " ");
    }
    while let (Some(open), Some(close)) = (rest.find("[["), rest.find("]]")) {
        if close < open {
            break;
        }
        rest.replace_range(open..close + 2, " ");
    }
    rest
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
            b'<' if !default && depth == 0 => angles += 1,
            b'>' if !default && depth == 0 => angles = angles.saturating_sub(1),
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

/// One parameter's name, type and markers, from its text:
/// `__attribute((annotate("memplan:reads:n" ))) const float * in`.
fn param(text: &str) -> Param {
    let mut markers = Vec::new();
    let mut rest = text.to_owned();
    // Attributes (the markers among them), then `[[...]]` specifiers.
    while let Some(at) = rest.find("__attribute") {
        let Some(open) = rest[at..].find('(').map(|i| at + i) else {
            break;
        };
        let Some(close) = matching(&rest, open) else {
            break;
        };
        let mut inside = &rest[open..close];
        while let Some(found) = inside.find("\"memplan:") {
            let literal = &inside[found..];
            let end = literal_end(literal.as_bytes(), 0);
            let body = literal[1..end.saturating_sub(1).max(1)].trim_start_matches("memplan:");
            if let Some((word, extent)) = body.split_once(':') {
                markers.push((word.to_owned(), extent.trim().to_owned()));
            }
            inside = &literal[end.min(literal.len())..];
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
    // The name is the last identifier, before any array brackets; a type
    // word there (`float *`, unnamed) is no name.
    let declarator = match rest.find('[') {
        Some(bracket) => &rest[..bracket],
        None => &rest,
    };
    let name_end = declarator.trim_end().len();
    let name_start = declarator[..name_end]
        .rfind(|c: char| !ident(c))
        .map_or(0, |i| i + 1);
    let candidate = &declarator[name_start..name_end];
    let keyword = matches!(
        candidate,
        "const" | "volatile" | "restrict" | "__restrict__" | "__restrict"
    );
    let named = candidate
        .chars()
        .next()
        .is_some_and(|c| ident(c) && !c.is_ascii_digit())
        && !keyword
        && !declarator[..name_start].trim().is_empty();
    let (name, ty_end) = if named {
        (candidate.to_owned(), name_start)
    } else {
        (String::new(), name_end)
    };
    let ty = plain_type(&format!(
        "{}{}",
        &declarator[..ty_end],
        &rest[declarator.len()..]
    ));
    Param { name, ty, markers }
}

/// A type's spelling without `struct`, `class`, `union`, `enum` or
/// spaces. Namespaces stay: `a::S` and `b::S` are two types, as are `::S`
/// and `S` in one scope.
fn plain_type(text: &str) -> String {
    let words: Vec<&str> = text
        .split_whitespace()
        .filter(|word| !matches!(*word, "struct" | "class" | "union" | "enum"))
        .collect();
    squeeze(&words.join(" "))
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

pub(super) fn matching_brace(text: &str, open: usize) -> Option<usize> {
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
                depth = depth.checked_sub(1)?;
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
pub(super) mod tests;
