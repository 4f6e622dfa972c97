//! Extents in constant evaluation: whether a declaration's extent is the
//! one the kernel's contract states, and the contract's extent written in
//! the declaration's own names for the help of an error.

use super::message::Message;
use crate::signature::ExtentTerm;

/// Whether two extent programs are the same, term by term (the check
/// asks the declaration to restate the contract, not to find an equal
/// expression of its own).
pub(crate) const fn same(a: &[ExtentTerm], b: &[ExtentTerm]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        let equal = match (a[index], b[index]) {
            (ExtentTerm::Param(x), ExtentTerm::Param(y)) => x == y,
            (ExtentTerm::Literal(x), ExtentTerm::Literal(y)) => x == y,
            (ExtentTerm::Add, ExtentTerm::Add)
            | (ExtentTerm::Sub, ExtentTerm::Sub)
            | (ExtentTerm::Mul, ExtentTerm::Mul)
            | (ExtentTerm::Div, ExtentTerm::Div)
            | (ExtentTerm::Rem, ExtentTerm::Rem) => true,
            _ => false,
        };
        if !equal {
            return false;
        }
        index += 1;
    }
    true
}

/// `program` appended in infix, parameter `i` written `names[i]` (or `p{i}`
/// past their end), with the parentheses C and Rust need and no others.
/// A malformed program (not one `memplan-build` writes) appends `?`.
pub(crate) const fn push(message: Message, program: &[ExtentTerm], names: &[&str]) -> Message {
    if program.is_empty() || !matches!(start_of(program, program.len()), Some(0)) {
        return message.push("?");
    }
    push_range(message, program, 0, program.len(), names)
}

/// Where the expression that ends just before `end` starts; `None` when
/// the program runs out first.
const fn start_of(program: &[ExtentTerm], end: usize) -> Option<usize> {
    let mut needed: usize = 1;
    let mut at = end;
    while needed > 0 {
        if at == 0 {
            return None;
        }
        at -= 1;
        needed = match program[at] {
            ExtentTerm::Param(_) | ExtentTerm::Literal(_) => needed - 1,
            _ => needed + 1,
        };
    }
    Some(at)
}

/// How tightly the expression ending just before `end` binds: 1 for `+ -`,
/// 2 for `* / %`, 3 for a name or a number.
const fn precedence(program: &[ExtentTerm], end: usize) -> u8 {
    match program[end - 1] {
        ExtentTerm::Param(_) | ExtentTerm::Literal(_) => 3,
        ExtentTerm::Add | ExtentTerm::Sub => 1,
        ExtentTerm::Mul | ExtentTerm::Div | ExtentTerm::Rem => 2,
    }
}

/// The well-formed expression `program[start..end]`.
const fn push_range(
    message: Message,
    program: &[ExtentTerm],
    start: usize,
    end: usize,
    names: &[&str],
) -> Message {
    let (op, symbol) = match program[end - 1] {
        ExtentTerm::Param(index) => {
            let index = index as usize;
            return if index < names.len() {
                message.push(names[index])
            } else {
                message.push("p").push_number(index as u64)
            };
        }
        ExtentTerm::Literal(value) => return message.push_number(value),
        ExtentTerm::Add => (1, " + "),
        ExtentTerm::Sub => (1, " - "),
        ExtentTerm::Mul => (2, " * "),
        ExtentTerm::Div => (2, " / "),
        ExtentTerm::Rem => (2, " % "),
    };
    let Some(split) = start_of(program, end - 1) else {
        return message.push("?");
    };
    let left = precedence(program, split) < op;
    let right = precedence(program, end - 1) <= op;
    let mut message = message;
    message = push_operand(message, program, start, split, names, left);
    message = message.push(symbol);
    push_operand(message, program, split, end - 1, names, right)
}

const fn push_operand(
    message: Message,
    program: &[ExtentTerm],
    start: usize,
    end: usize,
    names: &[&str],
    parenthesized: bool,
) -> Message {
    if parenthesized {
        push_range(message.push("("), program, start, end, names).push(")")
    } else {
        push_range(message, program, start, end, names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ExtentTerm::*;

    fn text(program: &[ExtentTerm]) -> String {
        push(Message::new(), program, &["a", "b", "c"])
            .as_str()
            .to_owned()
    }

    #[test]
    fn infix_with_the_parentheses_needed() {
        assert_eq!(text(&[Param(0)]), "a");
        assert_eq!(text(&[Param(0), Param(1), Param(2), Mul, Add]), "a + b * c");
        assert_eq!(
            text(&[Param(0), Param(1), Add, Param(2), Mul]),
            "(a + b) * c"
        );
        assert_eq!(text(&[Param(0), Param(1), Sub, Param(2), Sub]), "a - b - c");
        assert_eq!(
            text(&[Param(0), Param(1), Param(2), Sub, Sub]),
            "a - (b - c)"
        );
        assert_eq!(
            text(&[Param(0), Literal(1), Add, Literal(2), Div]),
            "(a + 1) / 2"
        );
        assert_eq!(text(&[Param(7)]), "p7");
        assert_eq!(text(&[Param(0), Add]), "?");
        assert_eq!(text(&[Param(0), Param(1)]), "?");
        assert_eq!(text(&[]), "?");
    }

    #[test]
    fn sameness_is_term_by_term() {
        assert!(same(
            &[Param(1), Literal(2), Mul],
            &[Param(1), Literal(2), Mul]
        ));
        assert!(!same(
            &[Param(1), Literal(2), Mul],
            &[Literal(2), Param(1), Mul]
        ));
        assert!(!same(&[Param(1)], &[Param(2)]));
        assert!(!same(&[Param(1)], &[]));
    }
}
