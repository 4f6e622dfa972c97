//! `cargo xtask demo`: the main job. Builds every example and runs each one;
//! without a GPU each example prints its plan and says no device was found.
//! On a GPU each writes its timeline (an SVG and a Chrome trace) under
//! `target/memplan-demo/`, and the demo lists them at the end.

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
    // Each example that runs on a GPU writes its timeline here.
    let timelines = crate::root().join("target/memplan-demo");
    remove_timelines(&timelines)?;
    for example in examples(&crate::root().join("examples"))? {
        println!("\n=== example {example} ===");
        run_command(
            cargo()
                .args(["run", "--quiet", "--release", "--example", &example])
                .env("MEMPLAN_DEMO_DIR", &timelines)
                .env("NCCL_NVLS_ENABLE", nvls_choice()),
        )?;
    }
    println!("\n=== examples/own-kernel, built as a crate outside this repository ===");
    crate::own_kernel::run()?;
    report_timelines(&timelines)
}

/// NCCL's NVLink SHARP (multicast) stays off unless the caller chose:
/// the multi-GPU examples start NCCL only once the choice is made.
fn nvls_choice() -> String {
    std::env::var("NCCL_NVLS_ENABLE")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "0".to_owned())
}

/// Timelines of an earlier demo go, so that what is there after this one
/// is this one's.
fn remove_timelines(dir: &Path) -> Result {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("cannot remove {}: {e}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Says where the examples' timelines are, or why there are none.
fn report_timelines(dir: &Path) -> Result {
    let mut written: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
            .collect(),
        Err(_) => Vec::new(),
    };
    written.sort();
    println!();
    if written.is_empty() {
        println!(
            "timelines: none written (the examples found no GPU); on a GPU machine each writes \
             its SVG picture and Chrome trace to {}",
            dir.display()
        );
    } else {
        println!(
            "timelines in {} (open the .trace.json files in ui.perfetto.dev):",
            dir.display()
        );
        for name in written {
            println!("  {name}");
        }
    }
    Ok(())
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
