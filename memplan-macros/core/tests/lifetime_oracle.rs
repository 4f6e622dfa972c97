//! The check of reads of memory nothing wrote, against a brute-force
//! oracle, on random plans with a loop.
//!
//! Each case is a plan of one device buffer `d` and one pinned buffer `h`,
//! both `(k + 3) * m + 2` long, and one stream: copies `h -> d` write
//! ranges of `d` and copies `d -> h` read them, before a loop `for c in
//! 0..count`, in its body and after it. Body ranges tile (`s(c)..s(c + 1)`,
//! spelled in several ways), leave gaps, overlap, or do not use `c`.
//!
//! The oracle runs the plan for every size in a grid, loop unrolled, with
//! plain `usize` arithmetic, keeping which elements of `d` are written. A
//! run goes as far as its first range that is not valid (starts after it
//! ends or leaves the buffer): the run time checks each range before the
//! op runs. A read of an element nothing wrote in any run is one the
//! checker must refuse. Where every range is valid for every size, a
//! multiple of `m`, and the body writes only what the checker can name
//! after the loop (tiles, and ranges without `c` in a loop that always
//! runs), it must also accept every plan the oracle finds sound. The
//! oracle shares no code with the checker's algebra.

use memplan_macros_core::{analyze, syntax::Input};
use proptest::prelude::*;

/// `lit + m·m + km·k·m + cm·c·m`, with the loop's `c` only in its body.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Point {
    lit: usize,
    m: usize,
    km: usize,
    cm: usize,
}

/// Sizes `k` and `m`, and the iteration `c` (0 outside the loop).
#[derive(Clone, Copy)]
struct Sizes {
    k: usize,
    m: usize,
    c: usize,
}

impl Point {
    fn eval(&self, s: Sizes) -> usize {
        self.lit + self.m * s.m + self.km * s.k * s.m + self.cm * s.c * s.m
    }

    /// Source text; `style`'s bits pick among equivalent spellings.
    fn text(&self, style: u32) -> String {
        let bit = |n: u32| style >> n & 1 == 1;
        let mut terms: Vec<String> = Vec::new();
        let mut m = self.m;
        // `(c + 1) * m`-like factorings take their `m` terms with them.
        if self.cm >= 1 && m >= self.cm && bit(0) {
            m -= self.cm;
            terms.push(match (self.cm, bit(1)) {
                (1, false) => "(c + 1) * m".to_owned(),
                (1, true) => "m * (c + 1)".to_owned(),
                (e, false) => format!("{e} * (c + 1) * m"),
                (e, true) => format!("(c + 1) * ({e} * m)"),
            });
        } else if self.cm >= 1 {
            terms.push(match (self.cm, bit(1)) {
                (1, false) => "c * m".to_owned(),
                (1, true) => "m * c".to_owned(),
                (e, false) => format!("{e} * c * m"),
                (e, true) => format!("c * m * {e}"),
            });
        }
        if self.km >= 1 && m >= self.km && bit(2) {
            m -= self.km;
            terms.push(match (self.km, bit(3)) {
                (1, false) => "(k + 1) * m".to_owned(),
                (1, true) => "m * (k + 1)".to_owned(),
                (f, _) => format!("{f} * (k + 1) * m"),
            });
        } else if self.km >= 1 {
            terms.push(match (self.km, bit(3)) {
                (1, false) => "k * m".to_owned(),
                (1, true) => "m * k".to_owned(),
                (f, false) => format!("{f} * k * m"),
                (f, true) => format!("k * ({f} * m)"),
            });
        }
        match (m, bit(4)) {
            (0, _) => {}
            (1, _) => terms.push("m".to_owned()),
            (b, false) => terms.push(format!("{b} * m")),
            (b, true) => terms.push(format!("m * {b}")),
        }
        if self.lit > 0 {
            terms.push(self.lit.to_string());
        }
        if terms.is_empty() {
            return "0".to_owned();
        }
        let turn = (style >> 5) as usize % terms.len();
        terms.rotate_left(turn);
        terms.join(" + ")
    }
}

#[derive(Clone, Copy, Debug)]
struct Range {
    start: Point,
    end: Point,
    style: u32,
}

impl Range {
    fn text(&self) -> String {
        let other = self.style.rotate_left(7);
        format!("{}..{}", self.start.text(self.style), self.end.text(other))
    }

    fn uses_c(&self) -> bool {
        self.start.cm > 0 || self.end.cm > 0
    }

    /// Whether it is `s(c)..s(c + 1)`.
    fn tiles(&self) -> bool {
        let next = Point {
            m: self.start.m + self.start.cm,
            ..self.start
        };
        self.start.cm > 0 && self.end == next
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    /// `copy h[r] -> d[r];`
    Write(Range),
    /// `copy d[r] -> h[r];`
    Read(Range),
}

impl Op {
    fn text(&self) -> String {
        match self {
            Op::Write(r) => format!("copy h[{0}] -> d[{0}];", r.text()),
            Op::Read(r) => format!("copy d[{0}] -> h[{0}];", r.text()),
        }
    }

    fn range(&self) -> &Range {
        match self {
            Op::Write(r) | Op::Read(r) => r,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Count {
    K,
    KPlusOne,
    KHalf,
    One,
    Two,
}

impl Count {
    fn text(self) -> &'static str {
        match self {
            Count::K => "k",
            Count::KPlusOne => "k + 1",
            Count::KHalf => "k / 2",
            Count::One => "1",
            Count::Two => "2",
        }
    }

    fn eval(self, k: usize) -> usize {
        match self {
            Count::K => k,
            Count::KPlusOne => k + 1,
            Count::KHalf => k / 2,
            Count::One => 1,
            Count::Two => 2,
        }
    }

    /// Whether the loop runs for every `k`.
    fn never_empty(self) -> bool {
        matches!(self, Count::KPlusOne | Count::One | Count::Two)
    }
}

#[derive(Clone, Debug)]
struct Plan {
    count: Count,
    before: Vec<Op>,
    body: Vec<Op>,
    after: Vec<Op>,
}

const LEN: Point = Point {
    lit: 2,
    m: 3,
    km: 1,
    cm: 0,
};

fn source(plan: &Plan) -> String {
    let block = |ops: &[Op]| ops.iter().map(Op::text).collect::<Vec<_>>().join(" ");
    let len = LEN.text(0);
    let mut text = format!(
        "plan P(k: usize, m: usize) {{ host h: [f32; {len}] pinned; \
         device d: [f32; {len}]; stream s; "
    );
    if !plan.before.is_empty() {
        text += &format!("on s {{ {} }} ", block(&plan.before));
    }
    text += &format!(
        "for c in 0..{} {{ on s {{ {} }} }} ",
        plan.count.text(),
        block(&plan.body)
    );
    if !plan.after.is_empty() {
        text += &format!("on s {{ {} }} ", block(&plan.after));
    }
    text + "}"
}

/// What the oracle found over every size.
struct Verdict {
    /// Some run reads an element of `d` nothing wrote.
    reads_unwritten: bool,
    /// Every range is valid for every size, in every iteration.
    all_valid: bool,
}

fn oracle(plan: &Plan) -> Verdict {
    let mut verdict = Verdict {
        reads_unwritten: false,
        all_valid: true,
    };
    let grid = (0..=6).flat_map(|k| (0..=6).map(move |m| (k, m)));
    let larger = [(9, 1), (1, 9), (10, 7), (13, 2)];
    for (k, m) in grid.chain(larger) {
        let len = LEN.eval(Sizes { k, m, c: 0 });
        let mut written = vec![false; len];
        let steps = plan
            .before
            .iter()
            .map(|op| (op, 0))
            .chain((0..plan.count.eval(k)).flat_map(|c| plan.body.iter().map(move |op| (op, c))))
            .chain(plan.after.iter().map(|op| (op, 0)));
        for (op, c) in steps {
            let sizes = Sizes { k, m, c };
            let (start, end) = (op.range().start.eval(sizes), op.range().end.eval(sizes));
            if start > end || end > len {
                verdict.all_valid = false;
                break;
            }
            match op {
                Op::Write(_) => written[start..end].fill(true),
                Op::Read(_) => verdict.reads_unwritten |= !written[start..end].iter().all(|&w| w),
            }
        }
    }
    verdict
}

const UNWRITTEN: &str = "cannot find earlier operations that write all of that";
/// Errors of other checks that these plans can meet: ranges that may
/// leave the buffer or run backwards.
const BOUNDS: [&str; 3] = [
    "reach past the end",
    "reaches past the end",
    "starts after it ends",
];

/// Whether the checker reports a read of memory nothing wrote, after
/// checking that whatever else it reports is about bounds.
fn checker_finds_unwritten_read(text: &str) -> Result<bool, TestCaseError> {
    let input: Input = syn::parse_str(text).expect("generated plans parse");
    let mut found = false;
    if let Err(errors) = analyze(&input.plans[0]) {
        for error in errors {
            let message = error.to_string();
            if message.contains(UNWRITTEN) {
                found = true;
            } else {
                prop_assert!(
                    BOUNDS.iter().any(|b| message.contains(b)),
                    "an error of another check: {message}\n{text}"
                );
            }
        }
    }
    Ok(found)
}

fn point(with_c: bool) -> impl Strategy<Value = Point> {
    let cm = if with_c { 1..3usize } else { 0..1usize };
    (0..2usize, 0..3usize, 0..2usize, cm).prop_map(|(lit, m, km, cm)| Point { lit, m, km, cm })
}

/// A range without `c`: a start and what it adds to reach its end.
fn fixed_range() -> impl Strategy<Value = Range> {
    (point(false), 0..2usize, 0..3usize, 0..2usize, any::<u32>()).prop_map(
        |(start, lit, m, km, style)| Range {
            start,
            end: Point {
                lit: start.lit + lit,
                m: start.m + m,
                km: start.km + km,
                cm: 0,
            },
            style,
        },
    )
}

/// A range of the loop's body: a tile, a tile with gaps between
/// iterations, tiles that overlap, or one without `c`.
fn body_range() -> impl Strategy<Value = Range> {
    let with_c = (point(true), 0..3usize, any::<u32>()).prop_map(|(start, shape, style)| {
        let (start, extra) = match shape {
            0 => (start, start.cm),             // s(c)..s(c + 1)
            1 => (Point { cm: 2, ..start }, 1), // gaps of `m`
            _ => (Point { cm: 1, ..start }, 2), // overlaps by `m`
        };
        Range {
            start,
            end: Point {
                m: start.m + extra,
                ..start
            },
            style,
        }
    });
    prop_oneof![3 => with_c, 1 => fixed_range()]
}

fn op(range: impl Strategy<Value = Range>, reads: u32) -> impl Strategy<Value = Op> {
    (range, 0..4u32).prop_map(move |(r, pick)| {
        if pick < reads {
            Op::Read(r)
        } else {
            Op::Write(r)
        }
    })
}

fn plan() -> impl Strategy<Value = Plan> {
    let count = prop_oneof![
        Just(Count::K),
        Just(Count::KPlusOne),
        Just(Count::KHalf),
        Just(Count::One),
        Just(Count::Two)
    ];
    (
        count,
        prop::collection::vec(op(fixed_range(), 1), 0..3),
        prop::collection::vec(op(body_range(), 1), 1..4),
        prop::collection::vec(op(fixed_range(), 2), 1..4),
        any::<bool>(),
    )
        .prop_map(|(count, before, body, after, multiples_of_m)| {
            let mut plan = Plan {
                count,
                before,
                body,
                after,
            };
            // Half the plans use multiples of `m` only, where the checker
            // must be exact (see `checker_must_be_exact`).
            if multiples_of_m {
                for op in plan
                    .before
                    .iter_mut()
                    .chain(&mut plan.body)
                    .chain(&mut plan.after)
                {
                    let (Op::Write(r) | Op::Read(r)) = op;
                    r.start.lit = 0;
                    r.end.lit = 0;
                }
            }
            plan
        })
}

/// Whether the checker must find every read of the plan covered where
/// the oracle does: the body only writes, each write one the checker
/// names after the loop, and every range is a multiple of `m`.
///
/// Ranges with constants in them are left out: a read can be covered by
/// one write for `m = 0` and by another for every other size (`d[m..m +
/// 1]` by `d[k * m..k * m + 1]` and `d[1..m + 1]`), which a proof
/// of coverage would have to split into cases. So are loops of `k / 2`
/// iterations: chunks up to `2 * (k / 2) * m` and one at `k * m` cover
/// `m..2 * m` together (`k <= 1` or not), which takes knowing that `(k
/// / 2) * m` is a multiple of `m`, beyond the prover's linear reasoning.
fn checker_must_be_exact(plan: &Plan) -> bool {
    if matches!(plan.count, Count::KHalf) {
        return false;
    }
    let multiple_of_m = |r: &Range| r.start.lit == 0 && r.end.lit == 0;
    let body = plan.body.iter().all(|op| match op {
        Op::Write(r) => r.tiles() || (!r.uses_c() && plan.count.never_empty()),
        Op::Read(_) => false,
    });
    let ops = plan.before.iter().chain(&plan.body).chain(&plan.after);
    body && ops.map(Op::range).all(multiple_of_m)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4_000, ..ProptestConfig::default() })]

    #[test]
    fn checker_agrees_with_the_oracle_on_what_a_loop_wrote(plan in plan()) {
        let text = source(&plan);
        let found = checker_finds_unwritten_read(&text)?;
        let verdict = oracle(&plan);
        if verdict.reads_unwritten {
            prop_assert!(found, "a read of memory nothing wrote was accepted:\n{text}");
        }
        if !verdict.reads_unwritten && verdict.all_valid && checker_must_be_exact(&plan) {
            prop_assert!(!found, "a plan that reads only what it wrote was refused:\n{text}");
        }
    }
}

#[test]
fn spellings_of_one_point_read_alike() {
    // The generator's spellings: every style must print the same sum.
    let point = Point {
        lit: 1,
        m: 2,
        km: 1,
        cm: 2,
    };
    let sizes = Sizes { k: 3, m: 5, c: 2 };
    let mut texts = std::collections::BTreeSet::new();
    for style in 0..64 {
        let text = point.text(style);
        let value = text
            .replace('c', &sizes.c.to_string())
            .replace('k', &sizes.k.to_string())
            .replace('m', &sizes.m.to_string());
        let expr: syn::Expr = syn::parse_str(&value).unwrap();
        assert_eq!(eval_literal(&expr), point.eval(sizes), "{text}");
        texts.insert(text);
    }
    assert!(texts.len() > 4, "few spellings: {texts:?}");
}

/// A literal arithmetic expression's value, for the test above.
fn eval_literal(expr: &syn::Expr) -> usize {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().unwrap(),
        syn::Expr::Paren(p) => eval_literal(&p.expr),
        syn::Expr::Binary(b) => {
            let (l, r) = (eval_literal(&b.left), eval_literal(&b.right));
            match b.op {
                syn::BinOp::Add(_) => l + r,
                syn::BinOp::Mul(_) => l * r,
                _ => panic!("unexpected operator"),
            }
        }
        _ => panic!("unexpected expression"),
    }
}
