//! A plan's sizes, computed as written with checked `usize` arithmetic: a
//! step that would overflow or go below zero, a division by zero, or a
//! launch dimension beyond `u32` is an error naming the size and its
//! inputs, never a wrapped value. The checks memplan makes at compile time
//! assume exactly this: that no size arithmetic overflows.
//!
//! Each size is computed once and kept; sizes that depend on a run's inputs
//! (the lengths of caller slices declared without one) again at each run.

use super::info::{PlanInfo, Site, Term};
use crate::error::Fault;
use std::fmt::Write as _;

pub(crate) struct Sizes {
    info: &'static PlanInfo,
    /// `None` for run inputs not given yet.
    inputs: Vec<Option<usize>>,
    /// How many inputs `new` gives; the others (but the loops' variables)
    /// each run gives or measures.
    given: usize,
    values: Vec<Option<usize>>,
    /// Whether each size reads a run input.
    dynamic: Vec<bool>,
    /// Whether each size reads a loop's variable.
    in_loop: Vec<bool>,
}

impl Sizes {
    /// The sizes of `info`, with `given` as the first inputs; the rest are
    /// run inputs.
    pub fn new(info: &'static PlanInfo, given: &[usize]) -> Sizes {
        let count = info.inputs.len().max(given.len());
        let mut inputs = vec![None; count];
        for (input, &value) in inputs.iter_mut().zip(given) {
            *input = Some(value);
        }
        let is_loop = |input: u16| info.loops.iter().any(|l| l.input == input);
        let reads = |size: &super::info::Size, which: &dyn Fn(u16) -> bool| {
            size.1
                .iter()
                .any(|term| matches!(*term, Term::Input(i) if which(i)))
        };
        let dynamic = info
            .sizes
            .iter()
            .map(|size| reads(size, &|i| usize::from(i) >= given.len() && !is_loop(i)))
            .collect();
        let in_loop = info
            .sizes
            .iter()
            .map(|size| reads(size, &is_loop))
            .collect();
        Sizes {
            info,
            inputs,
            given: given.len(),
            values: vec![None; info.sizes.len()],
            dynamic,
            in_loop,
        }
    }

    /// Inputs `inputs`, by name, `u64::MAX` for one not known yet: what
    /// the ranks of a job compare.
    pub fn inputs_of(&self, inputs: &[u16]) -> Vec<(&'static str, u64)> {
        inputs
            .iter()
            .map(|&input| {
                let input = usize::from(input);
                let name = self.info.inputs.get(input).copied().unwrap_or("?");
                let value = self.inputs.get(input).copied().flatten();
                (name, value.map_or(u64::MAX, |v| v as u64))
            })
            .collect()
    }

    /// Whether `new` gives input `input` (a size or constant of the plan),
    /// rather than each run (a `run` size, a caller slice's length).
    pub fn given_at_new(&self, input: u16) -> bool {
        usize::from(input) < self.given
    }

    /// Sets a loop's variable (`None` outside the loop), and forgets
    /// every size computed from it.
    pub fn set_loop_input(&mut self, input: u16, value: Option<usize>) {
        if let Some(slot) = self.inputs.get_mut(usize::from(input)) {
            *slot = value;
        }
        for (value, &in_loop) in self.values.iter_mut().zip(&self.in_loop) {
            if in_loop {
                *value = None;
            }
        }
    }

    /// The value of size `index`.
    pub fn get(&mut self, index: u16) -> Result<usize, Fault> {
        let index = usize::from(index);
        if let Some(Some(value)) = self.values.get(index) {
            return Ok(*value);
        }
        let size = self
            .info
            .sizes
            .get(index)
            .ok_or(Fault::Unsupported("a plan names a size it does not have"))?;
        let value = evaluate(size.1, &self.inputs).map_err(|problem| Fault::Size {
            size: size.0,
            problem: format!("{problem}{}", self.values_of(size.1)),
        })?;
        self.values[index] = Some(value);
        Ok(value)
    }

    /// Checks each bound the plan states of a size parameter (`run len:
    /// usize <= cap`), which its compile-time checks took as true: by
    /// `new` (`at_new`) those it can compute, the rest at each run, before
    /// anything reads the sizes. The site of the first that does not hold.
    pub fn check_bounds(&mut self, at_new: bool) -> Result<(), (Site, Fault)> {
        for bound in self.info.bounds {
            let later =
                |sizes: &Sizes| sizes.is_dynamic(bound.size) || sizes.is_dynamic(bound.limit);
            if at_new && later(self) {
                continue;
            }
            let value = self.get(bound.size).map_err(|f| (bound.site, f))?;
            let limit = self.get(bound.limit).map_err(|f| (bound.site, f))?;
            let info = self.info;
            let size = |index: u16| info.sizes.get(usize::from(index));
            if value > limit
                && let (Some(size), Some(limit_size)) = (size(bound.size), size(bound.limit))
            {
                let fault = Fault::AboveBound {
                    size,
                    value,
                    bound: limit_size,
                    limit,
                };
                return Err((bound.site, fault));
            }
        }
        Ok(())
    }

    /// Whether size `index` reads a run input.
    pub fn is_dynamic(&self, index: u16) -> bool {
        self.dynamic
            .get(usize::from(index))
            .copied()
            .unwrap_or(false)
    }

    /// The value of input `input`, if given.
    pub fn input(&self, input: u16) -> Option<usize> {
        self.inputs.get(usize::from(input)).copied().flatten()
    }

    /// Sets a run input, and forgets every size computed from run inputs.
    pub fn set_run_input(&mut self, input: u16, value: usize) {
        if let Some(slot) = self.inputs.get_mut(usize::from(input)) {
            *slot = Some(value);
        }
        for (value, &dynamic) in self.values.iter_mut().zip(&self.dynamic) {
            if dynamic {
                *value = None;
            }
        }
    }

    /// ` (n = 0, m = 7)`: the inputs a program reads, for messages.
    fn values_of(&self, program: &[Term]) -> String {
        let mut text = String::new();
        let mut seen = Vec::new();
        for term in program {
            let Term::Input(input) = *term else { continue };
            if seen.contains(&input) {
                continue;
            }
            seen.push(input);
            let name = self.info.inputs.get(usize::from(input)).unwrap_or(&"?");
            let value = self.inputs.get(usize::from(input)).copied().flatten();
            let separator = if text.is_empty() { " (" } else { ", " };
            let _ = match value {
                Some(value) => write!(text, "{separator}{name} = {value}"),
                None => write!(text, "{separator}{name} unknown"),
            };
        }
        if !text.is_empty() {
            text.push(')');
        }
        text
    }
}

/// Runs a size program; `Err` says which step failed and why.
pub(crate) fn evaluate(program: &[Term], inputs: &[Option<usize>]) -> Result<usize, String> {
    // A postfix program never holds more values than it has terms. Most
    // are a few terms long: those run on a stack of the caller's frame,
    // since a run evaluates its sizes again each time one changes.
    const ON_THE_FRAME: usize = 16;
    if program.len() <= ON_THE_FRAME {
        evaluate_on(program, inputs, &mut [0; ON_THE_FRAME])
    } else {
        evaluate_on(program, inputs, &mut vec![0; program.len()])
    }
}

/// What a program that does not add up says.
const MALFORMED: &str = "the plan's size program is malformed";

/// [`evaluate`] on `stack`, at least as long as `program`.
fn evaluate_on(
    program: &[Term],
    inputs: &[Option<usize>],
    stack: &mut [usize],
) -> Result<usize, String> {
    fn pop(stack: &[usize], depth: &mut usize) -> Result<usize, &'static str> {
        *depth = depth.checked_sub(1).ok_or(MALFORMED)?;
        Ok(stack[*depth])
    }
    let mut depth = 0;
    for term in program {
        let value = match *term {
            Term::Input(input) => inputs
                .get(usize::from(input))
                .copied()
                .flatten()
                .ok_or(MALFORMED)?,
            Term::Literal(value) => {
                usize::try_from(value).map_err(|_| format!("{value} does not fit a usize"))?
            }
            Term::U32 => {
                let value = pop(stack, &mut depth)?;
                u32::try_from(value).map_err(|_| format!("{value} does not fit a u32"))?;
                value
            }
            Term::Min => {
                let (b, a) = (pop(stack, &mut depth)?, pop(stack, &mut depth)?);
                a.min(b)
            }
            operation => {
                let (b, a) = (pop(stack, &mut depth)?, pop(stack, &mut depth)?);
                apply(operation, a, b)?
            }
        };
        stack[depth] = value;
        depth += 1;
    }
    match depth {
        1 => Ok(stack[0]),
        _ => Err(MALFORMED.to_owned()),
    }
}

fn apply(operation: Term, a: usize, b: usize) -> Result<usize, String> {
    let (value, symbol) = match operation {
        Term::Add => (a.checked_add(b), "+"),
        Term::Sub => (a.checked_sub(b), "-"),
        Term::Mul => (a.checked_mul(b), "*"),
        Term::Div => (a.checked_div(b), "/"),
        Term::Rem => (a.checked_rem(b), "%"),
        Term::Blocks => {
            return match b {
                0 => Err(format!("blocks({a}, 0) asks for blocks of no threads")),
                _ => Ok(a.div_ceil(b)),
            };
        }
        Term::Input(_) | Term::Literal(_) | Term::U32 | Term::Min => {
            return Err("the plan's size program is malformed".to_owned());
        }
    };
    value.ok_or_else(|| match operation {
        Term::Sub => format!("{a} - {b} is below zero"),
        Term::Div | Term::Rem => format!("{a} {symbol} {b} divides by zero"),
        _ => format!("{a} {symbol} {b} overflows usize"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Term::*;
    use memplan_model::{Plan, Site, Size};

    static INFO: PlanInfo = PlanInfo {
        file: "p.rs",
        elems: &[],
        code: &[],
        model: Plan {
            site: Site("P", 1, 1),
            inputs: &["n", "m", "xs.len()"],
            sizes: &[
                Size("n", &[Input(0)]),
                Size("n - 1", &[Input(0), Literal(1), Sub]),
                Size("n * m", &[Input(0), Input(1), Mul]),
                Size("blocks(n, 256)", &[Input(0), Literal(256), Blocks]),
                Size("xs.len() / 2", &[Input(2), Literal(2), Div]),
                Size("n as u32", &[Input(0), U32]),
                Size("n / (m - m)", &[Input(0), Input(1), Input(1), Sub, Div]),
                Size("broken", &[Add]),
            ],
            ..Plan::EMPTY
        },
    };

    fn problem(sizes: &mut Sizes, index: u16) -> String {
        match sizes.get(index) {
            Err(Fault::Size { problem, .. }) => problem,
            other => panic!("expected a size fault, got {other:?}"),
        }
    }

    #[test]
    fn computes_as_written() {
        let mut sizes = Sizes::new(&INFO, &[1000, 3]);
        assert_eq!(sizes.get(0), Ok(1000));
        assert_eq!(sizes.get(1), Ok(999));
        assert_eq!(sizes.get(2), Ok(3000));
        assert_eq!(sizes.get(3), Ok(4));
        assert_eq!(sizes.get(5), Ok(1000));
    }

    #[test]
    fn refuses_what_would_wrap_and_says_why() {
        let mut sizes = Sizes::new(&INFO, &[0, usize::MAX]);
        assert_eq!(problem(&mut sizes, 1), "0 - 1 is below zero (n = 0)");
        let mut sizes = Sizes::new(&INFO, &[2, usize::MAX]);
        assert!(problem(&mut sizes, 2).contains("overflows usize"));
        assert!(problem(&mut sizes, 6).contains("divides by zero"));
        let mut sizes = Sizes::new(&INFO, &[1 << 40, 1]);
        assert_eq!(
            problem(&mut sizes, 5),
            "1099511627776 does not fit a u32 (n = 1099511627776)"
        );
    }

    #[test]
    fn malformed_programs_are_errors_not_panics() {
        let mut sizes = Sizes::new(&INFO, &[1, 1]);
        assert!(problem(&mut sizes, 7).contains("malformed"));
        assert!(sizes.get(99).is_err());
    }

    #[test]
    fn programs_of_any_depth_add_up() {
        // 1 + 2 + ... + k, written left-deep (never more than two values
        // held) and right-deep (all k held at once), on the frame's stack
        // and past it.
        for k in 1..=40u64 {
            let sum = usize::try_from(k * (k + 1) / 2).unwrap();
            let mut left = vec![Literal(1)];
            for i in 2..=k {
                left.extend([Literal(i), Add]);
            }
            let mut right: Vec<Term> = (1..=k).map(Literal).collect();
            right.extend((1..k).map(|_| Add));
            assert_eq!(evaluate(&left, &[]), Ok(sum), "left-deep, k = {k}");
            assert_eq!(evaluate(&right, &[]), Ok(sum), "right-deep, k = {k}");
            // One operation too many, or one too few: malformed, not a panic.
            let mut under = right.clone();
            under.push(Add);
            assert!(evaluate(&under, &[]).unwrap_err().contains("malformed"));
            if k > 1 {
                right.pop();
                assert!(evaluate(&right, &[]).unwrap_err().contains("malformed"));
            }
        }
        assert!(evaluate(&[], &[]).unwrap_err().contains("malformed"));
    }

    #[test]
    fn run_inputs_are_measured_at_each_run() {
        let mut sizes = Sizes::new(&INFO, &[10, 1]);
        assert!(sizes.is_dynamic(4) && !sizes.is_dynamic(0));
        assert!(problem(&mut sizes, 4).contains("xs.len() unknown"));
        sizes.set_run_input(2, 10);
        assert_eq!(sizes.get(4), Ok(5));
        sizes.set_run_input(2, 4);
        assert_eq!(sizes.get(4), Ok(2));
        assert_eq!(sizes.get(0), Ok(10));
    }

    /// `plan P(cap: usize, run len: usize <= cap, run k: usize <= 2 * cap)`:
    /// inputs `cap`, then the run's `len` and `k`.
    static BOUNDED: PlanInfo = PlanInfo {
        file: "p.rs",
        elems: &[],
        code: &[],
        model: Plan {
            site: Site("P", 1, 1),
            inputs: &["cap", "len", "k"],
            sizes: &[
                Size("len", &[Input(1)]),
                Size("cap", &[Input(0)]),
                Size("k", &[Input(2)]),
                Size("2 * cap", &[Literal(2), Input(0), Mul]),
                Size("cap", &[Input(0)]),
            ],
            run_inputs: &[1, 2],
            bounds: &[
                memplan_model::BoundInfo {
                    site: Site("len <= cap", 1, 30),
                    size: 0,
                    limit: 1,
                },
                memplan_model::BoundInfo {
                    site: Site("k <= 2 * cap", 1, 50),
                    size: 2,
                    limit: 3,
                },
            ],
            ..Plan::EMPTY
        },
    };

    #[test]
    fn bounds_are_checked_once_their_values_are_known() {
        let mut sizes = Sizes::new(&BOUNDED, &[4096]);
        // At `new`, both read a run's value: nothing to check yet.
        assert_eq!(sizes.check_bounds(true), Ok(()));
        sizes.set_run_input(1, 4096);
        sizes.set_run_input(2, 0);
        assert_eq!(sizes.check_bounds(false), Ok(()));
        sizes.set_run_input(1, 4097);
        let (site, fault) = sizes.check_bounds(false).unwrap_err();
        assert_eq!(site.0, "len <= cap");
        assert_eq!(
            fault.to_string(),
            "`len` is 4097, above its bound `cap`, 4096: the plan's checks took `len <= cap` as true"
        );
        // A run after it is checked afresh.
        sizes.set_run_input(1, 10);
        sizes.set_run_input(2, 8193);
        let (site, _) = sizes.check_bounds(false).unwrap_err();
        assert_eq!(site.0, "k <= 2 * cap");
    }

    /// `plan P(cap: usize, n: usize <= cap)`: both given to `new`.
    static BOUNDED_AT_NEW: PlanInfo = PlanInfo {
        file: "p.rs",
        elems: &[],
        code: &[],
        model: Plan {
            site: Site("P", 1, 1),
            inputs: &["cap", "n"],
            sizes: &[Size("n", &[Input(1)]), Size("cap", &[Input(0)])],
            bounds: &[memplan_model::BoundInfo {
                site: Site("n <= cap", 1, 30),
                size: 0,
                limit: 1,
            }],
            ..Plan::EMPTY
        },
    };

    #[test]
    fn bounds_of_what_new_is_given_are_checked_by_new() {
        assert_eq!(
            Sizes::new(&BOUNDED_AT_NEW, &[8, 8]).check_bounds(true),
            Ok(())
        );
        let (site, _) = Sizes::new(&BOUNDED_AT_NEW, &[8, 9])
            .check_bounds(true)
            .unwrap_err();
        assert_eq!(site.0, "n <= cap");
    }
}
