//! `memforest update` and `memforest history`: a memory's versions as text.

use memforest::{MemoryId, MemoryRecord};
use serde::Serialize;

use crate::records::{self, span};

/// What `memforest update` did: `old` is superseded by `new` from now on.
#[derive(Debug, Clone, Serialize)]
pub struct Updated {
    /// The user.
    pub user: String,
    /// The memory that was updated (it stays in history).
    pub old: MemoryId,
    /// The new version.
    pub new: MemoryRecord,
}

/// `memforest update`'s text.
#[must_use]
pub fn render_updated(u: &Updated) -> String {
    format!(
        "memory {} of user {:?} is superseded by {}:\n  {}\n",
        u.old,
        u.user,
        u.new.id,
        records::line(&u.new)
    )
}

/// What `memforest history` prints: every version of a memory, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    /// The user.
    pub user: String,
    /// The memory asked about.
    pub id: MemoryId,
    /// Its versions, oldest first.
    pub versions: Vec<MemoryRecord>,
}

/// `memforest history`'s text: one version a line, `current` or `until TIME`.
#[must_use]
pub fn render_history(h: &History) -> String {
    let mut out = format!(
        "{} of memory {} of user {:?}:\n",
        records::count(h.versions.len() as u64, "version", "versions"),
        h.id,
        h.user
    );
    for m in &h.versions {
        out.push_str(&format!(
            "  {}  {}  {}  {}\n",
            m.id,
            span(m.start, m.end),
            records::validity(m),
            m.text
        ));
    }
    out
}
