//! memplan's per-user cache: what set-up downloads (the CUDA compiler, about
//! 250 MB) is kept once per user and machine and shared by every crate set
//! up there, instead of once per crate.
//!
//! Where: `MEMPLAN_CACHE_DIR` if set, else `$XDG_CACHE_HOME/memplan`, else
//! `$HOME/.cache/memplan`.
//!
//! An entry's name says everything it was made from, so an entry is never
//! changed in place: new pins make a new entry beside the old one. For an
//! entry `<name>`, the cache holds:
//! - `<name>/`: the entry, complete. It appears only through one `rename`
//!   of a folder already made and checked, so nobody sees half of one, and
//!   a set-up that dies part-way leaves no entry at all.
//! - `<name>.lock`: locked by the set-up filling `<name>`. A second set-up
//!   waits for it, then finds the entry complete and downloads nothing. The
//!   operating system releases the lock when its process ends, however it
//!   ends, so a crashed set-up never leaves a lock to clear by hand.
//! - `.<name>.partial-*`: a fill under way, or left by one that died (the
//!   next fill, holding the lock, removes it).

use super::Result;
use super::files::remove;
use std::ffi::OsString;
use std::fs::{self, File, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The variable that puts the cache in a folder of the user's choice.
pub const DIR_VARIABLE: &str = "MEMPLAN_CACHE_DIR";

/// The cache folder; entries are folders directly inside it.
pub struct Cache {
    root: PathBuf,
}

/// How [`Cache::fill`] found its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filled {
    /// Complete already: made by an earlier set-up, or by one running at
    /// the same time that finished first.
    Reused,
    /// Made by this call.
    Made,
}

impl Cache {
    /// The cache that this process's environment names.
    pub fn from_env() -> Result<Cache> {
        let cwd =
            std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
        root_from(|name| std::env::var_os(name), &cwd).map(Cache::at)
    }

    /// The cache in `root` (made when first filled).
    pub fn at(root: PathBuf) -> Cache {
        Cache { root }
    }

    /// The cache folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the entry `name` is, complete or not.
    pub fn entry(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Makes the entry `name` unless `is_complete` says it is there already.
    ///
    /// `make(scratch, made)` must create the entry at `made`; `scratch` is
    /// its own folder, holding `made`, for anything else it needs (it is
    /// removed afterwards). The entry is published only if `is_complete`
    /// accepts what `make` made.
    pub fn fill(
        &self,
        name: &str,
        is_complete: impl Fn(&Path) -> bool,
        make: impl FnOnce(&Path, &Path) -> Result,
    ) -> Result<Filled> {
        let entry = self.entry(name);
        if is_complete(&entry) {
            return Ok(Filled::Reused);
        }
        fs::create_dir_all(&self.root).map_err(|e| {
            format!(
                "cannot create memplan's cache folder {}: {e}\n\
                 help: set {DIR_VARIABLE} to a folder you can write to",
                self.root.display()
            )
        })?;
        let lock = self.lock(name)?;
        // Whoever held the lock before us may have made it.
        if is_complete(&entry) {
            return Ok(Filled::Reused);
        }
        if lock.is_some() {
            self.remove_leftovers(name)?;
        }
        if fs::symlink_metadata(&entry).is_ok() {
            self.set_aside_incomplete(name, lock.is_some())?;
        }

        let scratch = self.scratch(name, "partial");
        fs::create_dir(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
        let made = scratch.join(name);
        let filled = make(&scratch, &made).and_then(|()| {
            if is_complete(&made) {
                publish(&made, &entry, &is_complete)
            } else {
                Err(format!(
                    "the new cache entry {name} was incomplete once made, and was not kept\n\
                     help: run the set-up again; if it says this again, please report it"
                ))
            }
        });
        let removed = remove(&scratch);
        let filled = filled?;
        removed?;
        Ok(filled)
    }

    /// Takes the entry's lock, waiting for another set-up that holds it;
    /// `None` on a file system without locks, where the rename in
    /// [`publish`] is the only guard.
    fn lock(&self, name: &str) -> Result<Option<File>> {
        let path = self.root.join(format!("{name}.lock"));
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(TryLockError::WouldBlock) => {
                println!(
                    "setup: another set-up is filling {}; waiting for it",
                    self.entry(name).display()
                );
                file.lock()
                    .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
                Ok(Some(file))
            }
            Err(TryLockError::Error(_)) => Ok(None),
        }
    }

    /// Removes what fills of `name` that died left behind. Only with the
    /// lock held: without it, they may be another set-up's work under way.
    fn remove_leftovers(&self, name: &str) -> Result {
        let prefixes = [format!(".{name}.partial-"), format!(".{name}.stale-")];
        let entries = fs::read_dir(&self.root)
            .map_err(|e| format!("cannot list {}: {e}", self.root.display()))?;
        for found in entries.filter_map(|found| found.ok()) {
            let file_name = found.file_name();
            let file_name = file_name.to_string_lossy();
            if prefixes.iter().any(|prefix| file_name.starts_with(prefix)) {
                remove(&found.path())?;
            }
        }
        Ok(())
    }

    /// Moves an incomplete entry (files removed by hand, say) out of the
    /// way in one rename, then removes it. Without the lock, another
    /// set-up may have replaced it with a complete one since we looked, so
    /// it is left for the user.
    fn set_aside_incomplete(&self, name: &str, locked: bool) -> Result {
        let entry = self.entry(name);
        if !locked {
            return Err(format!(
                "the cache entry {} is incomplete, and this file system cannot lock it to \
                 replace it safely\nhelp: remove that folder and run the set-up again",
                entry.display()
            ));
        }
        println!("setup: {} is incomplete: replacing it", entry.display());
        let aside = self.scratch(name, "stale");
        fs::rename(&entry, &aside).map_err(|e| {
            format!(
                "cannot move the incomplete cache entry {} aside: {e}\n\
                 help: remove that folder and run the set-up again",
                entry.display()
            )
        })?;
        remove(&aside)
    }

    /// A new name beside the entry, unique to this process and call.
    fn scratch(&self, name: &str, kind: &str) -> PathBuf {
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, Ordering::Relaxed);
        self.root
            .join(format!(".{name}.{kind}-{}-{call}", std::process::id()))
    }
}

/// Moves `made` to `entry` in one rename. If another set-up got there first
/// (which the lock prevents where locks work), its entry is kept: `rename`
/// does not replace a folder that has files in it.
fn publish(made: &Path, entry: &Path, is_complete: impl Fn(&Path) -> bool) -> Result<Filled> {
    match fs::rename(made, entry) {
        Ok(()) => Ok(Filled::Made),
        Err(_) if is_complete(entry) => Ok(Filled::Reused),
        Err(e) => Err(format!(
            "cannot move the new cache entry into place at {}: {e}",
            entry.display()
        )),
    }
}

/// The cache folder that the variables `var` gives name, relative ones
/// taken from `cwd`: `MEMPLAN_CACHE_DIR`, else `$XDG_CACHE_HOME/memplan`
/// (if absolute, as the XDG specification asks), else
/// `$HOME/.cache/memplan`. Empty variables count as unset.
fn root_from(var: impl Fn(&str) -> Option<OsString>, cwd: &Path) -> Result<PathBuf> {
    let set = |name: &str| {
        var(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let root = if let Some(chosen) = set(DIR_VARIABLE) {
        chosen
    } else if let Some(xdg) = set("XDG_CACHE_HOME").filter(|xdg| xdg.is_absolute()) {
        xdg.join("memplan")
    } else if let Some(home) = set("HOME") {
        home.join(".cache/memplan")
    } else {
        return Err(format!(
            "cannot choose a folder for memplan's cache: none of {DIR_VARIABLE}, \
             XDG_CACHE_HOME and HOME is set\n\
             help: set {DIR_VARIABLE} to a folder of your own, e.g. `export {DIR_VARIABLE}=/var/tmp/memplan-$USER`"
        ));
    };
    // The project's link to the entry must not depend on where set-up ran.
    Ok(cwd.join(root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    const NAME: &str = "cuda-test-0123";

    /// An empty folder for one test.
    fn empty_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("memplan-cache-{test}-{}", std::process::id()));
        remove(&dir).unwrap();
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A fake entry is complete when its stamp says so, as the toolkit's is.
    fn is_complete(entry: &Path) -> bool {
        fs::read_to_string(entry.join("stamp")).is_ok_and(|stamp| stamp == "complete")
    }

    /// A fake download: the payload first, the stamp last.
    fn make_fake(made: &Path, payload: &str) -> Result {
        fs::create_dir_all(made).map_err(|e| e.to_string())?;
        fs::write(made.join("payload"), payload).map_err(|e| e.to_string())?;
        fs::write(made.join("stamp"), "complete").map_err(|e| e.to_string())
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(name, value)| (name.to_string(), OsString::from(value)))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn the_folder_comes_from_the_override_then_xdg_then_home() {
        let cwd = Path::new("/work/crate");
        let all = [
            (DIR_VARIABLE, "/scratch/memplan"),
            ("XDG_CACHE_HOME", "/xdg"),
            ("HOME", "/home/ada"),
        ];
        assert_eq!(
            root_from(env(&all), cwd).unwrap(),
            Path::new("/scratch/memplan")
        );
        assert_eq!(
            root_from(env(&all[1..]), cwd).unwrap(),
            Path::new("/xdg/memplan")
        );
        assert_eq!(
            root_from(env(&all[2..]), cwd).unwrap(),
            Path::new("/home/ada/.cache/memplan")
        );
    }

    #[test]
    fn empty_and_relative_variables_are_handled() {
        let cwd = Path::new("/work/crate");
        // Empty counts as unset; XDG_CACHE_HOME must be absolute.
        let odd = [
            (DIR_VARIABLE, ""),
            ("XDG_CACHE_HOME", "relative/cache"),
            ("HOME", "/home/ada"),
        ];
        assert_eq!(
            root_from(env(&odd), cwd).unwrap(),
            Path::new("/home/ada/.cache/memplan")
        );
        // A relative override is taken from where set-up runs, so that the
        // project's link does not depend on it.
        let relative = [(DIR_VARIABLE, "cache")];
        assert_eq!(
            root_from(env(&relative), cwd).unwrap(),
            Path::new("/work/crate/cache")
        );
        let none = root_from(env(&[]), cwd).unwrap_err();
        assert!(none.contains("help: set MEMPLAN_CACHE_DIR"), "{none}");
    }

    #[test]
    fn two_threads_filling_one_entry_make_it_once() {
        let root = empty_dir("threads");
        let makes = Arc::new(AtomicUsize::new(0));
        let start = Arc::new(Barrier::new(2));
        let threads: Vec<_> = (0..2)
            .map(|thread| {
                let (root, makes, start) = (root.clone(), makes.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    Cache::at(root).fill(NAME, is_complete, |_, made| {
                        makes.fetch_add(1, Ordering::SeqCst);
                        // Long enough that the other thread comes while this one works.
                        std::thread::sleep(Duration::from_millis(300));
                        make_fake(made, &format!("thread {thread}"))
                    })
                })
            })
            .collect();
        let mut filled: Vec<Filled> = threads
            .into_iter()
            .map(|thread| thread.join().unwrap().unwrap())
            .collect();
        filled.sort_by_key(|filled| *filled == Filled::Made);
        assert_eq!(filled, [Filled::Reused, Filled::Made]);
        assert_eq!(makes.load(Ordering::SeqCst), 1);
        assert!(is_complete(&root.join(NAME)));
        assert_eq!(names_in(&root), [NAME.to_owned(), format!("{NAME}.lock")]);
        remove(&root).unwrap();
    }

    #[test]
    fn the_loser_of_the_rename_keeps_the_winners_entry() {
        let root = empty_dir("rename");
        let entry = root.join(NAME);
        make_fake(&root.join("first"), "first").unwrap();
        make_fake(&root.join("second"), "second").unwrap();
        assert_eq!(
            publish(&root.join("first"), &entry, is_complete),
            Ok(Filled::Made)
        );
        assert_eq!(
            publish(&root.join("second"), &entry, is_complete),
            Ok(Filled::Reused)
        );
        assert_eq!(fs::read_to_string(entry.join("payload")).unwrap(), "first");

        // The same within `fill`: another set-up (on a file system without
        // locks) publishes while this one downloads; its entry is kept, and
        // ours is removed with the scratch folder.
        remove(&entry).unwrap();
        let filled = Cache::at(root.clone()).fill(NAME, is_complete, |_, made| {
            make_fake(&entry, "the other set-up's")?;
            make_fake(made, "ours")
        });
        assert_eq!(filled, Ok(Filled::Reused));
        assert_eq!(
            fs::read_to_string(entry.join("payload")).unwrap(),
            "the other set-up's"
        );
        // "first" became the entry; the loser's "second" was left alone.
        assert_eq!(
            names_in(&root),
            [NAME.to_owned(), format!("{NAME}.lock"), "second".to_owned()]
        );
        remove(&root).unwrap();
    }

    #[test]
    fn a_complete_entry_is_reused_without_making() {
        let root = empty_dir("reuse");
        make_fake(&root.join(NAME), "earlier").unwrap();
        let filled =
            Cache::at(root.clone()).fill(NAME, is_complete, |_, _| Err("made again".to_owned()));
        assert_eq!(filled, Ok(Filled::Reused));
        remove(&root).unwrap();
    }

    #[test]
    fn incomplete_entries_and_leftovers_are_replaced() {
        let root = empty_dir("stale");
        // An entry without its stamp, and a fill that died part-way.
        fs::create_dir_all(root.join(NAME).join("bin")).unwrap();
        let leftover = root.join(format!(".{NAME}.partial-99999-0"));
        fs::create_dir_all(leftover.join(NAME)).unwrap();
        let other = root.join(".other.partial-99999-0");
        fs::create_dir_all(&other).unwrap();
        let filled =
            Cache::at(root.clone()).fill(NAME, is_complete, |_, made| make_fake(made, "new"));
        assert_eq!(filled, Ok(Filled::Made));
        assert_eq!(
            fs::read_to_string(root.join(NAME).join("payload")).unwrap(),
            "new"
        );
        assert!(!root.join(NAME).join("bin").exists());
        assert!(!leftover.exists());
        // Another entry's fill may be under way: not ours to remove.
        assert!(other.exists());
        remove(&root).unwrap();
    }

    #[test]
    fn a_failed_or_incomplete_make_leaves_no_entry() {
        let root = empty_dir("failed");
        let cache = Cache::at(root.clone());
        let failed = cache.fill(NAME, is_complete, |scratch, made| {
            fs::write(scratch.join("wheel"), "half").unwrap();
            fs::create_dir_all(made).unwrap();
            Err("the network went away".to_owned())
        });
        assert_eq!(failed, Err("the network went away".to_owned()));
        let incomplete = cache.fill(NAME, is_complete, |_, made| {
            fs::create_dir_all(made).map_err(|e| e.to_string())
        });
        assert!(incomplete.unwrap_err().contains("was not kept"));
        assert_eq!(names_in(&root), [format!("{NAME}.lock")]);
        remove(&root).unwrap();
    }
}
