//! One forgotten `wait` is one error, whose help is the `wait` that was
//! forgotten: each `wait` of a three-stream pipeline is left out in turn,
//! and the plan must give exactly one error, offering a `wait`, and the
//! plan with that `wait` put back where the help says must pass every
//! check.

use memplan_macros_core::{analyze, syntax::Input};

const PIPELINE: &str = "
plan Engines(n: usize, m: usize, k: usize, r: usize) {
    kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
    host   input: [f32; n] pinned, output: [f32; n] pinned;
    device ring[r]: [f32; m];
    stream up, work, down;
    event  loaded[r], done[r], freed[r];
    for c in 0..k {
        let chunk = c * m..min(c * m + m, n);
        let used = 0..chunk.len();
        on up {
            wait freed[c % r];
            copy input[chunk] -> ring[c % r][used];
            record loaded[c % r];
        }
        on work {
            wait loaded[c % r];
            launch process_data<<<blocks(chunk.len(), 256), 256>>>(ring[c % r][used], chunk.len() as i32);
            record done[c % r];
        }
        on down {
            wait done[c % r];
            copy ring[c % r][used] -> output[chunk];
            record freed[c % r];
        }
    }
}";

fn errors(plan: &str) -> Vec<String> {
    let input: Input = syn::parse_str(plan).expect("the plan parses");
    match analyze(&input.plans[0]) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// The plan with the help's `wait` put back: "add `wait e[i];` on stream
/// `s` before `op`" puts it on the line before `op`'s, in `s`'s block.
fn applied(plan: &str, help: &str) -> String {
    let quoted: Vec<&str> = help.split('`').skip(1).step_by(2).collect();
    let (wait, stream, op) = (quoted[0], quoted[1], quoted[2]);
    let lines: Vec<&str> = plan.lines().collect();
    let block = lines
        .iter()
        .position(|line| line.trim() == format!("on {stream} {{"))
        .expect("the stream's block");
    let at = (block..lines.len())
        .find(|&i| {
            op.starts_with(
                lines[i]
                    .trim()
                    .trim_end_matches(';')
                    .split('<')
                    .next()
                    .unwrap(),
            )
        })
        .expect("the op in the block");
    let mut fixed: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    fixed.insert(at, wait.to_owned());
    fixed.join("\n")
}

#[test]
fn each_forgotten_wait_is_one_error_and_its_help_puts_it_back() {
    assert!(errors(PIPELINE).is_empty(), "{:?}", errors(PIPELINE));
    for wait in [
        "wait freed[c % r];",
        "wait loaded[c % r];",
        "wait done[c % r];",
    ] {
        let forgotten = PIPELINE.replace(wait, "");
        let found = errors(&forgotten);
        assert_eq!(found.len(), 1, "without `{wait}`: {found:#?}");
        let help = &found[0][found[0].find("help: ").expect("a help") + 6..];
        let help = help.lines().next().unwrap();
        assert!(
            help.starts_with(&format!("add `{wait}` on stream")),
            "without `{wait}`: {help}"
        );
        let fixed = applied(&forgotten, help);
        assert!(errors(&fixed).is_empty(), "{fixed}\n{:#?}", errors(&fixed));
    }
}
