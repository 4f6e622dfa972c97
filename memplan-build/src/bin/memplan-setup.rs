//! `memplan-setup [PROJECT]`: gives a Cargo project that uses memplan the
//! CUDA compiler and, on a machine without an NVIDIA driver, a stand-in for
//! the driver library, and points `.cargo/config.toml` at both. Run it once
//! in the project (the folder with its `Cargo.toml`); again is harmless.
//!
//! The compiler is downloaded once per user and machine, into memplan's
//! cache (`MEMPLAN_CACHE_DIR`, else `$XDG_CACHE_HOME/memplan`, else
//! `~/.cache/memplan`), and `.cuda/toolkit` links to it; `.cuda/` is added
//! to the project's `.gitignore`.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str =
    "usage: memplan-setup [PROJECT]   (PROJECT: the folder with Cargo.toml; default: .)";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let project = match (args.next(), args.next()) {
        (None, _) => PathBuf::from("."),
        (Some(arg), None) if arg == "-h" || arg == "--help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        (Some(project), None) => PathBuf::from(project),
        (Some(_), Some(_)) => {
            eprintln!("error: one project at a time\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    if !project.join("Cargo.toml").is_file() {
        eprintln!(
            "error: {} has no Cargo.toml: run memplan-setup in your crate's folder\n{USAGE}",
            project.display()
        );
        return ExitCode::FAILURE;
    }
    let set_up = memplan_build::setup::run(&project).and_then(|summary| {
        let ignored = memplan_build::setup::gitignore::ensure(&project)?;
        Ok((summary, ignored))
    });
    match set_up {
        Ok((summary, ignored)) => {
            println!("memplan-setup: {}", summary.compiler);
            println!("memplan-setup: {}", summary.driver);
            let config = if summary.configured {
                "written"
            } else {
                "already sets MEMPLAN_CUDA_HOME"
            };
            let gitignore = if ignored {
                format!("{} added", memplan_build::setup::gitignore::ENTRY)
            } else {
                "already ignores .cuda".to_owned()
            };
            println!("memplan-setup: .gitignore {gitignore}");
            println!("memplan-setup: .cargo/config.toml {config}; `cargo build` is ready");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
