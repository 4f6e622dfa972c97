//! Helps applied to a plan's text as a user would apply them, for the
//! tests that check a help before trusting it.
//!
//! A help is machine-applicable when one of its clauses (the parts between
//! `: `) is a list of edits and nothing else, each edit one of
//!
//! - ``declare `D;` ``: the declaration first in the plan;
//! - ``add `S;` on stream `s` before `op` `` (or `after`): the statement
//!   next to the op in a block of stream `s` (`and` for `add` after the
//!   first);
//! - ``add `S;` before `op` ``: next to an op outside stream blocks;
//! - ``move `S;` (line N) after `op` on stream `s` ``: the statement on
//!   line N taken out and put after the op.
//!
//! An op is named by its label (`copy a -> d`, `launch vadd`, `host(&c)`),
//! and by its line too, `(line N)`, where its lane has another op of that
//! label.
//!
//! The other clauses explain. A help with no such clause is advice (a
//! choice to make, or a change no single edit says), and is not applied.
//! Edits go on the lines they name, so an error's line still names the
//! same line after another error's help is applied.

#![allow(dead_code)]

use std::ops::Range;

/// One edit of a machine-applicable help.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// A declaration, first in the plan.
    Declare(String),
    /// A statement next to an op: in a block of `stream`, or outside
    /// stream blocks where `stream` is `None`.
    Add {
        what: String,
        stream: Option<String>,
        before: bool,
        op: Op,
    },
    /// The statement on `line` taken out and put after `op` in `stream`.
    Move {
        what: String,
        line: usize,
        op: Op,
        stream: String,
    },
}

/// An op as a help names it: its label, and its line where its lane has
/// another op of that label.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub label: String,
    pub line: Option<usize>,
}

/// The edits `help` is, or `None` where it is advice. `help` is the text
/// after `help: `; only its first line counts (notes follow).
pub fn edits(help: &str) -> Option<Vec<Edit>> {
    let help = help.lines().next().unwrap_or("");
    outside_code(help, ": ").into_iter().find_map(|clause| {
        let parts = outside_code(&clause, ", ");
        parts.iter().map(|part| edit(part)).collect()
    })
}

/// One edit, from words and code alternating as backticks split them.
fn edit(part: &str) -> Option<Edit> {
    let part = match part.strip_prefix("and ") {
        Some(rest) => format!("add {rest}"),
        None => part.to_owned(),
    };
    let mut pieces: Vec<&str> = part.split('`').collect();
    // The line that follows a piece of code, `(line N)`, is that code's.
    let mut lines = vec![None; pieces.len()];
    for i in (2..pieces.len()).step_by(2) {
        if let Some(rest) = pieces[i].strip_prefix(" (line ") {
            let (number, rest) = rest.split_once(')')?;
            lines[i - 1] = Some(number.parse::<usize>().ok()?);
            pieces[i] = rest;
        }
    }
    let code = |i: usize| pieces[i].to_owned();
    let op = |i: usize| Op {
        label: code(i),
        line: lines[i],
    };
    let statement = |i: usize| pieces[i].ends_with(';') && lines[i].is_none();
    let side = |prose: &str| prose == " before ";
    match pieces.as_slice() {
        ["declare ", _, ""] if statement(1) => Some(Edit::Declare(code(1))),
        [
            "add ",
            _,
            " on stream ",
            _,
            prose @ (" before " | " after "),
            _,
            "",
        ] if statement(1) => Some(Edit::Add {
            what: code(1),
            stream: Some(code(3)),
            before: side(prose),
            op: op(5),
        }),
        ["add ", _, prose @ (" before " | " after "), _, ""] if statement(1) => Some(Edit::Add {
            what: code(1),
            stream: None,
            before: side(prose),
            op: op(3),
        }),
        ["move ", _, " after ", _, " on stream ", _, ""] if pieces[1].ends_with(';') => {
            Some(Edit::Move {
                what: code(1),
                line: lines[1]?,
                op: op(3),
                stream: code(5),
            })
        }
        _ => None,
    }
}

/// The plan with the help applied: panics where the help is advice or
/// names a place the plan does not have.
pub fn applied(plan: &str, help: &str) -> String {
    apply(plan, help, None).unwrap_or_else(|why| panic!("{why}\n{help}\n{plan}"))
}

/// `text` (a plan, or a file of plans) with `help` applied, the help of an
/// error on `line` (which picks the plan, and the op where the help names
/// one written twice: the nearest); `Err` says why it cannot be.
pub fn apply(text: &str, help: &str, line: Option<usize>) -> Result<String, String> {
    let edits = edits(help).ok_or("the help is advice, not edits")?;
    let mut text = text.to_owned();
    for edit in edits {
        text = apply_edit(&text, &edit, line)?;
    }
    Ok(text)
}

fn apply_edit(text: &str, edit: &Edit, line: Option<usize>) -> Result<String, String> {
    let mut text = text.to_owned();
    match edit {
        Edit::Declare(declaration) => {
            let open = plan_body(&text, line).ok_or("no plan to declare it in")?;
            text.insert_str(open + 1, &format!(" {declaration}"));
        }
        Edit::Add {
            what,
            stream,
            before,
            op,
        } => {
            let at = find_op(&text, op, stream.as_deref(), line)?;
            if *before {
                text.insert_str(at.start, &format!("{what} "));
            } else {
                text.insert_str(at.end, &format!(" {what}"));
            }
        }
        Edit::Move {
            what,
            line: from,
            op,
            stream,
        } => {
            let taken = (statements(&text).into_iter())
                .find(|s| {
                    line_of(&text, s.start) == *from && squeeze(&text[s.clone()]) == squeeze(what)
                })
                .ok_or_else(|| format!("no `{what}` on line {from}"))?;
            // Blanked, not removed: every other line keeps its number.
            text.replace_range(taken.clone(), &" ".repeat(taken.len()));
            let at = find_op(&text, op, Some(stream), line)?;
            text.insert_str(at.end, &format!(" {what}"));
        }
    }
    Ok(text)
}

/// The statement that is `op`, in a block of `stream` or outside stream
/// blocks: without spaces, its text is the op's label, or the label and
/// then what a label leaves out (a launch's `<<<`, an allocation's `:`, a
/// host step's block); on the op's line where the help names one.
fn find_op(
    text: &str,
    op: &Op,
    stream: Option<&str>,
    line: Option<usize>,
) -> Result<Range<usize>, String> {
    let label = squeeze(&op.label);
    let blocks = stream_blocks(text);
    let found: Vec<Range<usize>> = (statements(text).into_iter())
        .filter(|s| {
            let written = squeeze(&text[s.clone()]);
            let written = written.strip_suffix(';').unwrap_or(&written);
            let rest = written.strip_prefix(label.as_str());
            rest.is_some_and(|rest| rest.is_empty() || rest.starts_with(['<', ':', '{']))
        })
        .filter(|s| op.line.is_none_or(|l| line_of(text, s.start) == l))
        .filter(|s| {
            let inner = (blocks.iter())
                .filter(|(_, body)| body.start < s.start && s.end <= body.end)
                .min_by_key(|(_, body)| body.len());
            inner.map(|(name, _)| name.as_str()) == stream
        })
        .collect();
    // Named by its label alone, the op is the one of its lane with that
    // label; where the text has it twice, the nearest the error.
    let nearest =
        (found.into_iter()).min_by_key(|s| line.map_or(0, |l| line_of(text, s.start).abs_diff(l)));
    let op = &op.label;
    nearest.ok_or_else(|| match stream {
        Some(stream) => format!("no `{op}` on stream `{stream}`"),
        None => format!("no `{op}` outside stream blocks"),
    })
}

/// Each `on s { ... }` block of `text`: the stream's name and the block's
/// inside.
fn stream_blocks(text: &str) -> Vec<(String, Range<usize>)> {
    (statements(text).into_iter())
        .filter_map(|s| {
            let written = &text[s.clone()];
            let rest = written.strip_prefix("on")?;
            if !rest.starts_with(char::is_whitespace) {
                return None;
            }
            let rest = rest.trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let open = s.start + written.find('{')?;
            (!name.is_empty()).then(|| (name, open + 1..s.end - 1))
        })
        .collect()
}

/// Where the body of the plan around `line` opens (its `{`): the last
/// plan that begins at or before the line, or the first plan. A plan is a
/// statement `plan Name(...) { ... }`, after its attributes and
/// visibility.
fn plan_body(text: &str, line: Option<usize>) -> Option<usize> {
    let plans: Vec<usize> = (statements(text).into_iter())
        .filter_map(|s| {
            let mut at = s.start;
            loop {
                let rest = &text[at..s.end];
                let skipped = rest.len() - rest.trim_start().len();
                let rest = rest.trim_start();
                at += skipped;
                if rest.starts_with("#[") {
                    at += attribute_len(rest)?;
                } else if let Some(after) = rest.strip_prefix("pub") {
                    let restricted = after.trim_start().starts_with('(');
                    at += match restricted {
                        true => rest.find(')')? + 1,
                        false => "pub".len(),
                    };
                } else {
                    return rest.starts_with("plan ").then_some(at);
                }
            }
        })
        .collect();
    let at = match line {
        Some(line) => (plans.iter().rev())
            .find(|&&at| line_of(text, at) <= line)
            .or(plans.first())?,
        None => plans.first()?,
    };
    text[*at..].find('{').map(|open| at + open)
}

/// The length of the attribute `#[...]` that `text` begins with.
fn attribute_len(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 1 => return Some(at + 1),
            ']' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Every statement of `text`, at every depth of braces: from its first
/// character to its `;`, or to the `}` of the block it ends with.
/// Comments are skipped.
fn statements(text: &str) -> Vec<Range<usize>> {
    let code = code_mask(text);
    let chars: Vec<(usize, char)> = (text.char_indices()).filter(|&(at, _)| code[at]).collect();
    let mut out = Vec::new();
    // Whether the next character that is not space starts a statement:
    // after a `{`, `;` or `}` outside parentheses and brackets.
    let mut starts = true;
    let mut brackets: Vec<char> = Vec::new();
    for (i, &(at, c)) in chars.iter().enumerate() {
        if c.is_whitespace() {
            continue;
        }
        if starts
            && brackets.last().is_none_or(|&b| b == '{')
            && !"{};".contains(c)
            && let Some(end) = statement_end(&chars[i..])
        {
            out.push(at..end);
        }
        match c {
            '(' | '[' | '{' => brackets.push(c),
            ')' | ']' | '}' => {
                brackets.pop();
            }
            _ => {}
        }
        starts = "{};".contains(c);
    }
    out
}

/// Where the statement that `chars` begins with ends: after its `;` or
/// its last block's `}`, at its own depth.
fn statement_end(chars: &[(usize, char)]) -> Option<usize> {
    let mut depth = 0usize;
    for &(at, c) in chars {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return None,
            ')' | ']' => depth -= 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            ';' if depth == 0 => return Some(at + 1),
            _ => {}
        }
    }
    None
}

/// For each byte of `text`, whether it is code: not in a comment (`//`
/// or `/* */`) and not in a string or character literal, whose `;` and
/// braces are no statement's.
fn code_mask(text: &str) -> Vec<bool> {
    let mut mask = vec![true; text.len() + 1];
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        let rest = &text[at..];
        let end = if rest.starts_with("//") {
            rest.find('\n').map_or(text.len(), |n| at + n)
        } else if rest.starts_with("/*") {
            rest.find("*/").map_or(text.len(), |n| at + n + 2)
        } else if c == '"' || is_char_literal(rest) {
            closing(rest, c).map_or(text.len(), |n| at + n)
        } else {
            at += c.len_utf8();
            continue;
        };
        mask[at..end].iter_mut().for_each(|b| *b = false);
        at = end;
    }
    mask
}

/// Whether `text` begins with a character literal (`'x'`, `'\n'`), not a
/// lifetime or a label.
fn is_char_literal(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next() == Some('\'')
        && match chars.next() {
            Some('\\') => true,
            Some(_) => chars.next() == Some('\''),
            None => false,
        }
}

/// Where the literal `text` begins with, quoted by `quote`, ends (after
/// its closing quote), escapes skipped.
fn closing(text: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == quote => return Some(at + c.len_utf8()),
            _ => {}
        }
    }
    None
}

/// The line (from 1) that byte `at` is on.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// `text` without white space, to compare a label with what is written.
fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `text` split at each `separator` that is not inside backticks (an op's
/// label may hold `, ` itself: `min(c * m, len)`).
fn outside_code(text: &str, separator: &str) -> Vec<String> {
    let (mut parts, mut current, mut code) = (Vec::new(), String::new(), false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if !code && rest.starts_with(separator) {
            parts.push(std::mem::take(&mut current));
            rest = &rest[separator.len()..];
            continue;
        }
        code ^= c == '`';
        current.push(c);
        rest = &rest[c.len_utf8()..];
    }
    parts.push(current);
    parts
}
