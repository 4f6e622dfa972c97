//! Symbolic sizes: lengths, range bounds and their arithmetic as written
//! (`n`, `n / 2`, `2 * c * w * h + 1`), compared without knowing the plan's
//! parameters.
//!
//! A [`Sym`] is a polynomial with integer coefficients over *atoms*, kept
//! in a normal form that is commutative and associative: `2 * c * w * h` and
//! `c * (2 * w) * h` are one term. An atom is a quantity that is never
//! negative:
//! - a `usize` parameter (`n`) or a constant of the user's (`CHUNK`);
//! - a term the arithmetic does not look into, equal only to itself: `x as
//!   usize` of anything but the plan's own sizes, a call (`f(n)`), the
//!   length of a caller's slice (`xs.len()`);
//! - a floor quotient `⌊N / D⌋` of two polynomials, with what floor
//!   division guarantees: `D * q <= N <= D * q + D - 1`. A remainder
//!   `N % D` is `N - D * ⌊N / D⌋`.
//!
//! What is proved ([`Atoms::provably_le`]) holds for every value of the
//! atoms that the plan can run with: `new` computes every size as written
//! with checked arithmetic, so no step underflows or divides by zero, and
//! checks every range against its buffer. The checks pass those run-time
//! guarantees to the prover as *facts* (`start <= end`, `end <= len`, `b <=
//! a` for each `a - b` written), and a proof may use them.
//!
//! The prover ([`Atoms::provably_le`]) proves what follows linearly from
//! those facts, the bounds of each quotient and every atom being `>= 0`,
//! plus that a difference of sizes is an integer: `2 * (n / 4) <= n / 2`
//! holds because `2q₄ - q₂ >= 1` is impossible with `4q₄ <= n` and `2q₂ >=
//! n - 1`. It decides that question exactly over a bounded number of
//! inequalities, so its cost is bounded too; what is beyond it is never
//! proved, only reported as unproved.

mod atoms;
mod display;
mod linear;
mod poly;
mod prove;
mod read;
mod witness;

pub use atoms::Atoms;
pub use poly::{Atom, Sym, SymRange};
pub use read::{
    MAX_DEPTH, Reading, UNSUPPORTED, binary_chain, cast_name, is_min, is_pure, is_usize, mentions,
    read,
};
