//! How long `memplan!` takes to check a large plan: 1000 ops over 8 streams,
//! with events between them, on 16 buffers (each stream on its own range of
//! each buffer) and on a single buffer (every access against every other,
//! the race check's worst case). Prints the median of 21 runs of the front
//! end (parse, resolve, check) and of the whole macro (with the lowering).

use memplan_macros_core::{analyze, expand, syntax::Input};
use std::time::{Duration, Instant};

const OPS: usize = 1000;
const STREAMS: usize = 8;
const RUNS: usize = 21;

fn main() {
    println!("checker: {OPS} ops over {STREAMS} streams, median of {RUNS} runs");
    for buffers in [16, 1] {
        let source = plan(buffers);
        let input: Input = syn::parse_str(&source).expect("the benchmark plan parses");
        let (_, analysis) = analyze(&input.plans[0]).expect("the benchmark plan is valid");
        assert!(analysis.warnings.is_empty());
        let check = median(|| {
            let input: Input = syn::parse_str(&source).unwrap();
            analyze(&input.plans[0]).unwrap();
        });
        let tokens: proc_macro2::TokenStream = source.parse().unwrap();
        let whole = median(|| {
            expand(tokens.clone());
        });
        println!(
            "  {buffers:>2} buffer(s): parse + check {:>8.2} ms   whole macro {:>8.2} ms",
            ms(check),
            ms(whole)
        );
    }
}

/// The plan's source: every buffer filled first, then rounds in which each
/// stream copies its range of one buffer into the next buffer, recording an
/// event that the next stream waits for now and then.
fn plan(buffers: usize) -> String {
    let len = 1024;
    let chunk = len / STREAMS;
    let mut text = String::from("plan Big() {\n");
    for b in 0..buffers {
        text += &format!("device d{b}: [f32; {len}];\n");
    }
    let streams: Vec<String> = (0..STREAMS).map(|s| format!("s{s}")).collect();
    text += &format!("stream {};\n", streams.join(", "));
    let events: Vec<String> = (0..STREAMS).map(|s| format!("e{s}")).collect();
    text += &format!("event {};\n", events.join(", "));
    let mut ops = 0;
    for b in 0..buffers {
        text += &format!("fill d{b} with 0.0;\n");
        ops += 1;
    }
    let mut round = 0;
    while ops < OPS {
        for s in 0..STREAMS {
            let (from, to) = (round % buffers, (round + 1) % buffers);
            // With one buffer, each stream copies within its own range.
            let (start, half) = (s * chunk, chunk / 2);
            let (to_start, copy_len) = if from == to {
                (start + half, half)
            } else {
                (start, chunk)
            };
            let mut block = format!(
                "copy d{from}[{start}..{}] -> d{to}[{to_start}..{}];",
                start + copy_len,
                to_start + copy_len
            );
            ops += 1;
            if round % 4 == 3 {
                block += &format!(" record e{s};");
                ops += 1;
            }
            if round % 4 == 0 && round > 0 {
                block = format!("wait e{};", (s + 1) % STREAMS) + &block;
                ops += 1;
            }
            text += &format!("on s{s} {{ {block} }}\n");
        }
        round += 1;
    }
    text + "}\n"
}

fn median(mut run: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
