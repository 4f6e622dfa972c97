//! `cargo xtask demo`: the main job. Builds every example and runs each one;
//! without a GPU each example prints its plan and says no device was found.

use crate::Result;
use crate::process::{cargo, run as run_command};
use std::path::Path;

/// The classic techniques in teaching order; examples not listed run after.
const ORDER: &[&str] = &[
    "devices",
    "pageable_roundtrip",
    "pinned_stream",
    "async_overlap",
    "zero_copy",
    "host_alloc_flags",
];

pub fn run() -> Result {
    crate::setup::run()?;
    run_command(cargo().args(["build", "--release", "--examples"]))?;
    for example in examples(&crate::root().join("examples"))? {
        println!("\n=== example {example} ===");
        run_command(cargo().args(["run", "--quiet", "--release", "--example", &example]))?;
    }
    println!("\n=== examples/own-kernel, built as a crate outside this repository ===");
    crate::own_kernel::run()
}

/// Example names in `examples/`, in teaching order.
pub fn examples(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let is_example =
                path.extension().is_some_and(|ext| ext == "rs") || path.join("main.rs").is_file();
            is_example.then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort_by_key(|name| {
        let rank = ORDER
            .iter()
            .position(|known| known == name)
            .unwrap_or(ORDER.len());
        (rank, name.clone())
    });
    Ok(names)
}
