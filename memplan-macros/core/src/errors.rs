//! Collects every error of a plan so the user sees all of them at once
//! (serde_derive's `Ctxt`). Each error carries the user's span; its text is
//! what is wrong, then a `help:` line with the fix.

use proc_macro2::Span;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt::Display;

/// The errors of one plan, collected as the checks find them (each once)
/// and reported together by [`finish`](Errors::finish).
#[derive(Default)]
pub struct Errors {
    errors: RefCell<Vec<syn::Error>>,
    checked: std::cell::Cell<bool>,
    /// While set, errors are dropped: a loop's body read again for a later
    /// iteration repeats the errors of the first reading.
    muted: std::cell::Cell<bool>,
    /// Where each error points and what it says, to keep one of each.
    seen: RefCell<HashSet<ErrorKey>>,
}

/// An error's first and last line and column, and its text.
type ErrorKey = (usize, usize, usize, usize, String);

impl Errors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// An error at `span`: `message`, and on a line of its own, `help`.
    pub fn at(&self, span: Span, message: impl Display, help: impl Display) {
        self.push(syn::Error::new(span, format!("{message}\n\nhelp: {help}")));
    }

    /// An error over all of `tokens` (a whole expression, where [`at`]
    /// would point at its first token alone): `message`, then `help`.
    ///
    /// [`at`]: Errors::at
    pub fn over(&self, tokens: impl quote::ToTokens, message: impl Display, help: impl Display) {
        self.push(syn::Error::new_spanned(
            tokens,
            format!("{message}\n\nhelp: {help}"),
        ));
    }

    /// Adds an error, once: the checks of a loop look at its body more
    /// than once, and may find one mistake twice.
    pub fn push(&self, error: syn::Error) {
        if self.muted.get() {
            return;
        }
        let (start, end) = (error.span().start(), error.span().end());
        let key = (
            start.line,
            start.column,
            end.line,
            end.column,
            error.to_string(),
        );
        if self.seen.borrow_mut().insert(key) {
            self.errors.borrow_mut().push(error);
        }
    }

    /// Runs `report`, and puts what it reports among the errors so far in
    /// the order of where each error points, so that the errors of several
    /// rules, and of building the IR (which reads the plan top to bottom),
    /// read top to bottom, as the declarations and ops they name do. Of
    /// two at one place, `report`'s comes first: that a size changes at
    /// each run before that it is no size (as building the IR said them).
    pub fn in_source_order(&self, report: impl FnOnce(&Errors)) {
        let before = self.errors.borrow().len();
        report(self);
        let mut errors = std::mem::take(&mut *self.errors.borrow_mut())
            .into_iter()
            .enumerate()
            .collect::<Vec<_>>();
        errors.sort_by_key(|(index, error)| {
            let start = error.span().start();
            (start.line, start.column, *index < before)
        });
        *self.errors.borrow_mut() = errors.into_iter().map(|(_, error)| error).collect();
    }

    /// Drops errors while `muted`.
    pub fn mute(&self, muted: bool) {
        self.muted.set(muted);
    }

    /// Whether errors are dropped now.
    pub fn muted(&self) -> bool {
        self.muted.get()
    }

    /// What each error so far says.
    pub fn messages(&self) -> Vec<String> {
        self.errors
            .borrow()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Whether no error has been reported.
    pub fn is_empty(&self) -> bool {
        self.errors.borrow().is_empty()
    }

    /// All errors as one, or `Ok` if there were none.
    pub fn finish(self) -> syn::Result<()> {
        self.checked.set(true);
        let mut errors = self.errors.take().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Errors {
    fn drop(&mut self) {
        // An error collector dropped unread would lose errors silently.
        if !self.checked.get() && !std::thread::panicking() {
            debug_assert!(
                self.errors.borrow().is_empty(),
                "memplan: errors were collected and never reported"
            );
        }
    }
}
