//! The shapes that once made the checker slow, each through the whole
//! macro, next to the 1000-op plan of `checker`: a length summing 160
//! quotients, 500 one-element fills then 500 one-element reads (at literal
//! and at symbolic places), 200 chunks written backwards then read as one,
//! 1000 prefixes ended at `min` then a read,
//! 300 streams
//! each followed by `sync all`, a loop of 200 copies whose iterations are
//! compared, and 1000 nested parentheses. Prints the
//! median time of each; every one should take well under a second.

#[path = "plans/mod.rs"]
mod plans;

use memplan_macros_core::expand;
use plans::{median, ms};
use std::time::Duration;

fn main() {
    println!(
        "pathological: the whole macro, median of {} runs",
        plans::RUNS
    );
    let mut slowest = Duration::ZERO;
    for (name, source) in shapes() {
        let tokens: proc_macro2::TokenStream = source.parse().expect("the shape tokenizes");
        let time = median(|| {
            expand(tokens.clone());
        });
        slowest = slowest.max(time);
        println!("  {name:<44} {:>9.2} ms", ms(time));
    }
    println!("slowest: {:.2} ms", ms(slowest));
}

fn shapes() -> Vec<(&'static str, String)> {
    let quotients: Vec<String> = (2..162).map(|d| format!("n / {d}")).collect();
    let sum = quotients.join(" + ");
    let fills: String = (0..500)
        .map(|i| format!("fill d[{i}..{}] with 0.0;\n", i + 1))
        .collect();
    let reads: String = (0..500)
        .map(|i| format!("copy d[{i}..{}] -> h[{i}..{}];\n", i + 1, i + 1))
        .collect();
    let symbolic_fills: String = (0..500)
        .map(|i| format!("fill d[{i} * k..{i} * k + 1] with 0.0;\n"))
        .collect();
    let symbolic_reads: String = (0..500)
        .map(|i| format!("copy d[{i} * k..{i} * k + 1] -> h[{i}..{}];\n", i + 1))
        .collect();
    // Chunks written last to first, then read as one: each step of the
    // covering walk looks through every chunk not yet stepped over.
    let chunks_backwards: String = (0..200)
        .rev()
        .map(|i| format!("fill d[{i} * k..{} * k] with 0.0;\n", i + 1))
        .collect();
    // Writes whose ends no proof orders (`min(i * m, b)`): the walk keeps
    // only a few of them as points.
    let min_prefixes: String = (0..1000)
        .map(|i| format!("fill d[0..min({i} * m, b)] with 0.0;\n"))
        .collect();
    let streams: Vec<String> = (0..300).map(|s| format!("s{s}")).collect();
    let syncs: String = (0..300)
        .map(|s| format!("on s{s} {{ fill d[{s}..{}] with 0.0; }} sync all;\n", s + 1))
        .collect();
    let nested = format!("{}n{}", "(".repeat(1000), ")".repeat(1000));
    // Ranges of tangled quotients on streams of their own: every pair is
    // a proof the prover works at.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let tangled: String = (0..40)
        .map(|s| {
            let (start, end) = (tangled_size(&mut seed, 4), tangled_size(&mut seed, 4));
            format!("on s{s} {{ fill d[{start}..{start} + {end}] with 0.0; }}\n")
        })
        .collect();
    let tangled_streams: Vec<String> = (0..40).map(|s| format!("s{s}")).collect();
    // A loop body of 200 copies of parts of the iteration's chunk, on a set
    // of streams: every pair of the two iterations' copies is a proof.
    let chunk_copies: String = (0..200)
        .map(|j| {
            let part = format!("(c * 200 + {j}) * m..(c * 200 + {}) * m", j + 1);
            format!("copy a[{part}] -> d[{part}];\n")
        })
        .collect();
    vec![
        ("1000 ops over 8 streams, 16 buffers", plans::big(16)),
        ("1000 ops over 8 streams, 1 buffer", plans::big(1)),
        (
            "a length of 160 quotients",
            format!(
                "plan P(n: usize) {{ device d: [f32; {sum}], e: [f32; {sum}]; \
                 fill d with 0.0; copy d -> e; }}"
            ),
        ),
        (
            "500 one-element fills, then 500 reads",
            format!(
                "plan P() {{ device d: [f32; 500]; host h: [f32; 500] pageable;\n{fills}{reads}}}"
            ),
        ),
        (
            "the same at `i * k`, a size",
            format!(
                "plan P(k: usize) {{ device d: [f32; 500 * k]; host h: [f32; 500] pageable;\n\
                 {symbolic_fills}{symbolic_reads}}}"
            ),
        ),
        (
            "200 chunks written backwards, then read as one",
            format!(
                "plan P(k: usize) {{ device d: [f32; 200 * k], e: [f32; 200 * k];\n\
                 {chunks_backwards}copy d -> e;\n}}"
            ),
        ),
        (
            "1000 prefixes ended at `min`, then a read",
            format!(
                "plan P(m: usize, b: usize) {{ device d: [f32; b], e: [f32; b];\n\
                 {min_prefixes}copy d -> e;\n}}"
            ),
        ),
        (
            "300 streams, each then `sync all`",
            format!(
                "plan P() {{ device d: [f32; 300]; stream {};\n{syncs}}}",
                streams.join(", ")
            ),
        ),
        (
            "40 streams, ranges of tangled quotients",
            format!(
                "plan P(n: usize, m: usize, k: usize) {{ device d: [f32; n * m * k]; stream {};\n{tangled}}}",
                tangled_streams.join(", ")
            ),
        ),
        (
            "a loop of 200 copies, iterations compared",
            format!(
                "plan P(m: usize, k: usize, s: usize) {{ host a: [f32; k * 200 * m] pinned; \
                 device d: [f32; k * 200 * m]; stream lanes[s];\n\
                 for c in 0..k {{ on lanes[c % s] {{\n{chunk_copies}}} }} }}"
            ),
        ),
        (
            "1000 nested parentheses (refused)",
            format!("plan P(n: usize) {{ device d: [f32; {nested}]; fill d with 0.0; }}"),
        ),
    ]
}

/// A size `depth` operators deep over `n`, `m`, `k` and small literals,
/// with every operator the arithmetic has, from a xorshift `seed`.
fn tangled_size(seed: &mut u64, depth: u32) -> String {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    if depth == 0 {
        return match next() % 4 {
            0 => "n".into(),
            1 => "m".into(),
            2 => "k".into(),
            _ => format!("{}", 1 + next() % 9),
        };
    }
    let op = ["+", "*", "/", "%", "+"][(next() % 5) as usize];
    let left = tangled_size(seed, depth - 1);
    let right = match op {
        // Divisors that are not zero, literal or a size plus one.
        "/" | "%" => format!("({} + 1)", tangled_size(seed, depth / 2)),
        _ => tangled_size(seed, depth - 1),
    };
    format!("({left} {op} {right})")
}
