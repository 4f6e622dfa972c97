//! The plans the checker's benchmarks feed to the macro.

use std::time::{Duration, Instant};

/// Ops of the big plan, and its streams.
pub const OPS: usize = 1000;
pub const STREAMS: usize = 8;
/// Runs per measurement; the median is reported.
pub const RUNS: usize = 21;

/// The plan's source: every buffer filled first, then rounds in which each
/// stream copies its range of one buffer into the next buffer, recording an
/// event that the next stream waits for now and then.
pub fn big(buffers: usize) -> String {
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

pub fn median(mut run: impl FnMut()) -> Duration {
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

pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
