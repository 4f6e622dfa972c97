//! The project's `.gitignore`: `.cuda/` is made for this machine (a link
//! into this user's cache, a stub built for this machine's driver or its
//! absence), so it is never committed.
//!
//! `.cargo/config.toml` is left to be committed: set-up writes only paths
//! relative to the project into it (`relative = true`), the same on every
//! machine, and it may hold the user's own settings beside them.

use super::Result;
use std::fs;
use std::path::Path;

/// The line added: `.cuda` at the project's root, not in sub-folders.
pub const ENTRY: &str = "/.cuda/";

const COMMENT: &str =
    "# Made by memplan-setup for this machine: the CUDA compiler's link and the driver stub.";

/// Adds [`ENTRY`] to `project/.gitignore` (made if absent) unless a line
/// there ignores `.cuda` already; whether it wrote anything.
pub fn ensure(project: &Path) -> Result<bool> {
    let path = project.join(".gitignore");
    let old = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let Some(new) = with_entry(&old) else {
        return Ok(false);
    };
    fs::write(&path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(true)
}

/// `gitignore` with [`ENTRY`] added at its end, in its own line endings;
/// `None` if a line ignores `.cuda` already.
fn with_entry(gitignore: &str) -> Option<String> {
    if gitignore.lines().any(ignores_cuda_dir) {
        return None;
    }
    let newline = if gitignore.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut text = gitignore.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push_str(newline);
    }
    text.push_str(&format!("{COMMENT}{newline}{ENTRY}{newline}"));
    Some(text)
}

/// Whether a `.gitignore` line ignores the whole of the root's `.cuda`
/// (memplan's own repository ignores all but its READMEs with `/.cuda/*`).
fn ignores_cuda_dir(line: &str) -> bool {
    let pattern = line.trim();
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    let pattern = pattern.strip_suffix("/**").unwrap_or(pattern);
    let pattern = pattern.strip_suffix("/*").unwrap_or(pattern);
    let pattern = pattern.strip_suffix('/').unwrap_or(pattern);
    pattern == ".cuda"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_the_entry_to_a_new_or_other_gitignore() {
        assert_eq!(with_entry("").unwrap(), format!("{COMMENT}\n/.cuda/\n"));
        // `cargo new`'s, and one whose last line has no newline.
        assert_eq!(
            with_entry("/target\n").unwrap(),
            format!("/target\n{COMMENT}\n/.cuda/\n")
        );
        assert_eq!(
            with_entry("/target").unwrap(),
            format!("/target\n{COMMENT}\n/.cuda/\n")
        );
        assert_eq!(
            with_entry("/target\r\n").unwrap(),
            format!("/target\r\n{COMMENT}\r\n/.cuda/\r\n")
        );
    }

    #[test]
    fn adds_it_once() {
        let added = with_entry("/target\n").unwrap();
        assert_eq!(with_entry(&added), None);
        for present in [
            ".cuda",
            ".cuda/",
            "/.cuda",
            "/.cuda/*",
            ".cuda/**",
            "  /.cuda/\r",
        ] {
            assert_eq!(
                with_entry(&format!("/target\n{present}\n")),
                None,
                "{present}"
            );
        }
    }

    #[test]
    fn other_cuda_lines_do_not_count() {
        for other in [
            "!/.cuda/",
            ".cuda/lib64",
            "# .cuda/",
            ".cudarc",
            "src/.cuda",
        ] {
            assert!(with_entry(&format!("{other}\n")).is_some(), "{other}");
        }
    }

    #[test]
    fn writes_the_file_once() {
        let dir = std::env::temp_dir().join(format!("memplan-gitignore-{}", std::process::id()));
        super::super::files::remove(&dir).unwrap();
        fs::create_dir_all(&dir).unwrap();
        assert!(ensure(&dir).unwrap(), "made");
        assert!(!ensure(&dir).unwrap(), "already there");
        let text = fs::read_to_string(dir.join(".gitignore")).unwrap();
        assert_eq!(text.matches(ENTRY).count(), 1);
        super::super::files::remove(&dir).unwrap();
    }
}
