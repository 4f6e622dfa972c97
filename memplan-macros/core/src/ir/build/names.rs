//! Names: each declaration binds its name once, in one namespace shared by
//! buffers, streams, events, kernels and parameters; a name used is looked
//! up by the kind its place wants, and a misspelt one gets the closest
//! declaration of that kind.

use super::*;

/// What a name in the plan stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Name {
    Param(usize),
    Buffer(BufferId),
    Kernel(KernelId),
    Stream(StreamId),
    Event(EventId),
    Gpus,
}

impl Name {
    pub(super) fn what(self) -> &'static str {
        match self {
            Name::Param(_) => "a parameter",
            Name::Buffer(_) => "a buffer",
            Name::Kernel(_) => "a kernel",
            Name::Stream(_) => "a stream",
            Name::Event(_) => "an event",
            Name::Gpus => "the plan's GPUs",
        }
    }
}

/// The kind of declaration a position names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wanted {
    Buffer,
    Stream,
    Event,
    Kernel,
}

impl Wanted {
    pub(super) fn accepts(self, name: Name) -> bool {
        matches!(
            (self, name),
            (Wanted::Buffer, Name::Buffer(_))
                | (Wanted::Stream, Name::Stream(_))
                | (Wanted::Event, Name::Event(_))
                | (Wanted::Kernel, Name::Kernel(_))
        )
    }
}

/// The edit distance between two names (insertions, deletions,
/// substitutions), for "did you mean".
pub(super) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Whether a name `d` edits away from `candidate` is likely a misspelling
/// of it: a third of its letters at most, and less than half of the longer
/// name (`a` is not a misspelt `da`, nor `s3` of `s1`).
pub(super) fn close(d: usize, written: &str, candidate: &str) -> bool {
    let (written, candidate) = (written.chars().count(), candidate.chars().count());
    d <= (candidate / 3).max(1) && 2 * d < written.max(candidate)
}

impl Builder<'_> {
    /// Binds `ident` to `name`; reports a second declaration.
    pub(super) fn declare(&mut self, ident: &Ident, name: Name) {
        self.reserve(ident);
        let key = ident.to_string();
        if let Some(&(previous, span)) = self.names.get(&key) {
            let reusable = matches!(previous, Name::Buffer(id) if self.freed.contains(&id))
                && matches!(name, Name::Buffer(id) if matches!(self.plan.buffers[id].kind, BufferKind::StreamOrdered { .. }));
            if !reusable {
                self.errors.at(
                    ident.span(),
                    format!("`{ident}` is declared twice: it is already {} (line {})", previous.what(), span.start().line),
                    "give one of them another name; buffers, streams, events, kernels and parameters share one namespace",
                );
                return;
            }
        }
        self.names.insert(key, (name, ident.span()));
    }

    pub(super) fn reserve(&self, ident: &Ident) {
        if ident.to_string().starts_with(RESERVED_PREFIX) {
            self.errors.at(
                ident.span(),
                format!("`{ident}` starts with `{RESERVED_PREFIX}`, which memplan keeps for the code it generates"),
                "choose another name",
            );
        }
    }

    /// What `ident` names; an error if nothing, with the declaration of
    /// the kind wanted here whose name is closest, or one to write.
    pub(super) fn lookup(&self, ident: &Ident, wanted: Wanted) -> Option<Name> {
        if let Some(&(name, _)) = self.names.get(&ident.to_string()) {
            return Some(name);
        }
        let written = ident.to_string();
        let closest = self
            .names
            .iter()
            .filter(|(_, (name, _))| wanted.accepts(*name))
            .map(|(candidate, _)| (distance(&written, candidate), candidate))
            .filter(|(d, candidate)| close(*d, &written, candidate))
            .min();
        let help = match closest {
            Some((_, candidate)) => format!("did you mean `{candidate}`?"),
            None => format!("declare it: {}", self.declaration_of(ident, wanted)),
        };
        self.errors.at(
            ident.span(),
            format!("`{ident}` is not declared in this plan"),
            help,
        );
        None
    }

    /// A declaration of `ident` as the kind wanted, in the plan's own terms.
    pub(super) fn declaration_of(&self, ident: &Ident, wanted: Wanted) -> String {
        let size = self
            .plan
            .params
            .iter()
            .find(|p| matches!(p.kind, ParamKind::Size))
            .map_or_else(|| "1024".to_owned(), |p| p.name.to_string());
        match wanted {
            Wanted::Stream => format!("`stream {ident};`"),
            Wanted::Event => format!("`event {ident};`"),
            Wanted::Kernel => format!("`kernel {ident}(...) from MODULE;`"),
            Wanted::Buffer => {
                format!("`device {ident}: [f32; {size}];` or `host {ident}: [f32; {size}] pinned;`")
            }
        }
    }

    pub(super) fn wrong_kind<T>(&self, ident: &Ident, found: Name, expected: &str) -> Option<T> {
        self.errors.at(
            ident.span(),
            format!(
                "`{ident}` is {}, and {expected} is needed here",
                found.what()
            ),
            format!("name {expected} declared in this plan"),
        );
        None
    }

    pub(super) fn buffer_named(&self, ident: &Ident) -> Option<BufferId> {
        match self.lookup(ident, Wanted::Buffer)? {
            Name::Buffer(id) => Some(id),
            other => self.wrong_kind(ident, other, "a buffer"),
        }
    }

    pub(super) fn stream(&self, ident: &Ident) -> Option<StreamId> {
        match self.lookup(ident, Wanted::Stream)? {
            Name::Stream(id) => Some(id),
            other => self.wrong_kind(ident, other, "a stream"),
        }
    }

    pub(super) fn event(&self, ident: &Ident) -> Option<EventId> {
        match self.lookup(ident, Wanted::Event)? {
            Name::Event(id) => Some(id),
            other => self.wrong_kind(ident, other, "an event"),
        }
    }
}
