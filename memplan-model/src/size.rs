//! Sizes as the runtime computes them: postfix programs over the plan's
//! inputs, written in the order the user wrote the arithmetic, so that the
//! runtime checks every step the user's code would take.

/// A size as written (`n / 2 + 1`), and the postfix program that computes
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Size<'a>(pub &'a str, pub &'a [Term]);

/// One step of a size program, on a stack of `usize`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// Pushes input `i`.
    Input(u16),
    /// Pushes this number.
    Literal(u64),
    /// Pops `b`, then `a`; pushes `a + b`, an error on overflow.
    Add,
    /// Pops `b`, then `a`; pushes `a - b`, an error below zero.
    Sub,
    /// Pops `b`, then `a`; pushes `a * b`, an error on overflow.
    Mul,
    /// Pops `b`, then `a`; pushes `a / b` rounded down, an error if `b` is
    /// zero.
    Div,
    /// Pops `b`, then `a`; pushes the remainder of `a / b`, an error if `b` is
    /// zero.
    Rem,
    /// `blocks(n, per_block)`: `n / per_block` rounded up.
    Blocks,
    /// `as u32` in a launch configuration: the value must fit.
    U32,
    /// Pops `b`, then `a`; pushes the smaller.
    Min,
}
