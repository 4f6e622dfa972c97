//! How long `memplan!` takes to check a large plan: 1000 ops over 8 streams,
//! with events between them, on 16 buffers (each stream on its own range of
//! each buffer) and on a single buffer (every access against every other,
//! the race check's worst case). Prints the median of 21 runs of the front
//! end (parse, resolve, check) and of the whole macro (with the lowering).

#[path = "plans/mod.rs"]
mod plans;

use memplan_macros_core::{analyze, expand, syntax::Input};
use plans::{OPS, STREAMS, median, ms};

fn main() {
    println!(
        "checker: {OPS} ops over {STREAMS} streams, median of {} runs",
        plans::RUNS
    );
    for buffers in [16, 1] {
        let source = plans::big(buffers);
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
