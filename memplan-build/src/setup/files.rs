//! File-system steps that every part of set-up takes, with errors that name
//! the path.

use super::Result;
use std::fs;
use std::path::Path;

/// Removes a file, link or folder if it is there; a link is removed, never
/// what it points to.
pub fn remove(path: &Path) -> Result {
    let result = match fs::symlink_metadata(path) {
        Err(_) => return Ok(()),
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
    };
    result.map_err(|e| format!("cannot remove {}: {e}", path.display()))
}

/// Makes every file directly in `dir` executable (zip archives do not keep
/// the executable bit).
pub fn make_executable(dir: &Path) -> Result {
    use std::os::unix::fs::PermissionsExt;
    for entry in fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("cannot chmod {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_a_link_but_not_its_target() {
        let dir = std::env::temp_dir().join(format!("memplan-files-{}", std::process::id()));
        remove(&dir).unwrap();
        fs::create_dir_all(dir.join("target")).unwrap();
        fs::write(dir.join("target/kept"), "").unwrap();
        std::os::unix::fs::symlink(dir.join("target"), dir.join("link")).unwrap();
        remove(&dir.join("link")).unwrap();
        assert!(!dir.join("link").exists());
        assert!(dir.join("target/kept").is_file());
        remove(&dir.join("absent")).unwrap();
        remove(&dir).unwrap();
        assert!(!dir.exists());
    }
}
