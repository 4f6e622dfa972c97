//! `cargo xtask host-cost [launches...]`: memplan's own host cost per run,
//! without a GPU. `benches/small_ops --host-only` queues tiny launches by
//! hand and through `run()`, each way in a loop of its own, against a CUDA
//! driver that does nothing: `benches/null_driver.c`, with every other
//! function of the driver stub (`.cuda/libcuda_stub.c`, which `setup`
//! writes) answering success, built with the C compiler into
//! `target/null-driver`. The command it runs is printed, to put under
//! `perf record -g`.
//!
//! `--count` runs it under valgrind's callgrind instead and prints the
//! instructions it took: on a machine whose timings swing between minutes
//! (this project's: the same binary 0.057 and 0.108 us an op), a count,
//! steady to about 0.2% from run to run, compares two builds where times
//! cannot. `callgrind_annotate` on the output file it names says where
//! they went.

use crate::Result;
use crate::process::{cargo, output, run};
use std::collections::BTreeSet;
use std::fs;
use std::process::Command;

pub fn run_host_cost(launches: &[String], count: bool) -> Result {
    crate::setup::run()?;
    let root = crate::root();
    let own = read(&root.join("benches/null_driver.c"))?;
    let stub = read(&root.join(".cuda/libcuda_stub.c"))?;
    let dir = root.join("target/null-driver");
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let source = dir.join("null_driver_all.c");
    fs::write(&source, whole_driver(&own, &stub))
        .map_err(|e| format!("cannot write {}: {e}", source.display()))?;
    let compiler = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    run(Command::new(compiler)
        .args([
            "-O2",
            "-shared",
            "-fPIC",
            "-w",
            "-Wl,-soname,libcuda.so.1",
            "-o",
        ])
        .arg(dir.join("libcuda.so.1"))
        .arg(&source))?;
    let built = output(cargo().args([
        "bench",
        "--no-run",
        "--bench",
        "small_ops",
        "--message-format=json-render-diagnostics",
    ]))?;
    let bench = crate::bundle::executables(&built.stdout, "bench", "benches")
        .into_iter()
        .find(|artifact| artifact.name == "small_ops")
        .ok_or("cargo built no small_ops benchmark")?
        .executable;
    println!(
        "host-cost: LD_LIBRARY_PATH={} {} --host-only {}",
        dir.display(),
        bench.display(),
        launches.join(" ")
    );
    let counts = dir.join("callgrind.out");
    let mut command = if count {
        let mut valgrind = Command::new("valgrind");
        valgrind
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", counts.display()))
            .arg(&bench);
        valgrind
    } else {
        Command::new(&bench)
    };
    command
        .arg("--host-only")
        .args(launches)
        .env("LD_LIBRARY_PATH", &dir);
    if !count {
        return run(&mut command);
    }
    let counted = output(&mut command).map_err(|e| format!("{e} (is valgrind installed?)"))?;
    let log = String::from_utf8_lossy(&counted.stderr);
    let total = collected(&log).ok_or_else(|| format!("callgrind said no total:\n{log}"))?;
    println!(
        "host-cost: {total} instructions, the whole program (callgrind; \
         `callgrind_annotate {}` says where)",
        counts.display()
    );
    Ok(())
}

/// The instructions callgrind counted, from its closing
/// `==pid== Collected : N` line.
fn collected(log: &str) -> Option<u64> {
    log.lines()
        .find_map(|line| line.split("Collected : ").nth(1))
        .and_then(|n| n.trim().parse().ok())
}

fn read(path: &std::path::Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// `own`, the functions that give something, followed by every other
/// function the stub defines, each answering success.
fn whole_driver(own: &str, stub: &str) -> String {
    let defined: BTreeSet<&str> = functions(own).collect();
    let mut whole = own.to_owned();
    whole.push_str("\n/* Every other function of the driver stub: success. */\n");
    for name in functions(stub).filter(|name| !defined.contains(name)) {
        whole.push_str(&format!("int {name}(void) {{ return 0; }}\n"));
    }
    whole
}

/// The names of the C functions `source` defines at the start of a line
/// as `int cu...(`.
fn functions(source: &str) -> impl Iterator<Item = &str> {
    source.lines().filter_map(|line| {
        let rest = line.strip_prefix("int cu")?;
        let end = rest.find('(')?;
        Some(&line[4..6 + end])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrinds_total_is_read() {
        let log = "==11410== Events    : Ir\n==11410== Collected : 41799631\n==11410==\n";
        assert_eq!(collected(log), Some(41_799_631));
        assert_eq!(collected("==1== no such line\n"), None);
    }

    #[test]
    fn every_stub_function_is_defined_once() {
        let own = "int cuInit(unsigned f) { return 0; }\nstatic int helper(void);\nint cuDeviceGet(int *d, int o) { *d = o; return 0; }\n";
        let stub = "/* stub */\nint cuInit(void) { return 34; }\nint cuDeviceGet(void) { return 34; }\nint cuMemFree_v2(void) { return 34; }\n";
        let whole = whole_driver(own, stub);
        let names: Vec<&str> = functions(&whole).collect();
        assert_eq!(names, ["cuInit", "cuDeviceGet", "cuMemFree_v2"]);
        assert!(whole.contains("int cuMemFree_v2(void) { return 0; }"));
        assert!(!whole.contains("return 34"));
    }
}
