//! Extents as the source writes them (`rows * cols`), read into postfix
//! programs over the kernel's parameters, with C's precedence (which is
//! Rust's).

use memplan_model::ExtentTerm;

pub(super) const EXTENT_HELP: &str = "an extent is written with integers, the kernel's integer \
                           parameters, `+ - * / %` and parentheses: `n`, `rows * cols`";

/// `text` in postfix order, each name the position of a parameter of
/// `names`. Precedence and associativity are C's (and Rust's).
pub(super) fn parse_extent(text: &str, names: &[&str]) -> Result<Vec<ExtentTerm>, String> {
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
    out: Vec<ExtentTerm>,
    depth: usize,
}

impl Parser<'_> {
    fn sum(&mut self) -> Result<(), String> {
        self.product()?;
        while let Some(op @ ('+' | '-')) = self.op() {
            self.at += 1;
            self.product()?;
            self.out.push(if op == '+' {
                ExtentTerm::Add
            } else {
                ExtentTerm::Sub
            });
        }
        Ok(())
    }

    fn product(&mut self) -> Result<(), String> {
        self.factor()?;
        while let Some(op @ ('*' | '/' | '%')) = self.op() {
            self.at += 1;
            self.factor()?;
            self.out.push(match op {
                '*' => ExtentTerm::Mul,
                '/' => ExtentTerm::Div,
                _ => ExtentTerm::Rem,
            });
        }
        Ok(())
    }

    fn factor(&mut self) -> Result<(), String> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        match token {
            Some(Token::Int(value)) => self.out.push(ExtentTerm::Literal(value)),
            Some(Token::Name(name)) => {
                let index = self.names.iter().position(|n| *n == name).ok_or_else(|| {
                    format!(
                        "the extent names `{name}`, which is not a parameter of the kernel\n\
                         help: {EXTENT_HELP}"
                    )
                })?;
                // A kernel's parameters, at least a byte each, fit its
                // 32 KiB of parameter space: far fewer than a u16 counts.
                let index = u16::try_from(index)
                    .map_err(|_| format!("the extent names parameter {index}, past the 65535th"))?;
                self.out.push(ExtentTerm::Param(index));
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

#[cfg(test)]
mod tests {
    use super::*;
    use ExtentTerm::*;

    #[test]
    fn extents_follow_cs_precedence() {
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
        for bad in ["", "a +", "(a", "a b", "a << 2", "f(a)", "a ? b : c", "-a"] {
            assert!(parse_extent(bad, &names).is_err(), "{bad}");
        }
        let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
        assert!(parse_extent(&deep, &names).is_err());
    }
}
