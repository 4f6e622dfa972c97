//! Libraries loaded at run time, and only when needed (CUPTI, NCCL): the
//! file an environment variable names, else the first of the usual names
//! and places that loads; then their functions, looked up by name.

use libloading::Library;

/// A library, kept loaded for the rest of the process (its functions are
/// held, and it may call back), and the path it was loaded from.
pub(crate) struct Loaded {
    pub library: Library,
    pub path: String,
}

/// Loads `what` from the path in `variable` if set, else from the first
/// of `candidates` that loads; the error names every path tried and the
/// first failure.
pub(crate) fn open(what: &str, variable: &str, candidates: Vec<String>) -> Result<Loaded, String> {
    if !cfg!(target_os = "linux") {
        return Err(format!("memplan loads {what} on Linux only"));
    }
    let tried = match std::env::var_os(variable) {
        Some(path) => vec![path.to_string_lossy().into_owned()],
        None => candidates,
    };
    let mut first_error = None;
    for path in &tried {
        // SAFETY: CUPTI's and NCCL's initializers set up the library only.
        match unsafe { Library::new(path) } {
            Ok(library) => {
                return Ok(Loaded {
                    library,
                    path: path.clone(),
                });
            }
            Err(error) => {
                first_error.get_or_insert(error.to_string());
            }
        }
    }
    Err(format!(
        "{what} could not be loaded ({}; tried {}); set {variable} to its path",
        first_error.unwrap_or_default(),
        tried.join(", ")
    ))
}

impl Loaded {
    /// The function `name`.
    ///
    /// # Safety
    /// `F` is the type of `name` in the library's C headers.
    pub unsafe fn function<F: Copy>(&self, name: &str) -> Result<F, String> {
        // SAFETY: the caller's promise.
        unsafe { self.library.get::<F>(name.as_bytes()) }
            .map(|symbol| *symbol)
            .map_err(|e| format!("{} has no {name}: {e}", self.path))
    }
}
