//! How memories read as text: one line per memory in `add` and `list`, the whole record in
//! `get`, a time range in the form every command uses.

use chrono::{DateTime, Utc};
use memforest::api::Source;
use memforest::MemoryRecord;
use serde::Serialize;

/// `n` with the singular or plural noun: `1 memory`, `2 memories`.
#[must_use]
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `time` as `2024-04-02 09:00` (UTC).
#[must_use]
pub fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M").to_string()
}

/// An event time: `start`, or `start -> end` when it spans time; `-` when unknown.
#[must_use]
pub fn span(start: Option<DateTime<Utc>>, end: Option<DateTime<Utc>>) -> String {
    match (start, end) {
        (Some(s), Some(e)) if e != s => format!("{} -> {}", time(s), time(e)),
        (Some(s), _) => time(s),
        (None, Some(e)) => format!("-> {}", time(e)),
        (None, None) => "-".to_owned(),
    }
}

/// Where a memory was said: `session s1 (m1, m2); session s2 (m7)`.
#[must_use]
pub fn sources(sources: &[Source]) -> String {
    sources
        .iter()
        .map(|s| format!("session {} ({})", s.session, s.messages.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether a memory still holds: `current`, or `until TIME` when a newer one supersedes it.
#[must_use]
pub fn validity(r: &MemoryRecord) -> String {
    r.valid_until
        .map_or_else(|| "current".to_owned(), |t| format!("until {}", time(t)))
}

/// One memory on one line: id, event time, text, and `(until TIME)` when superseded.
#[must_use]
pub fn line(r: &MemoryRecord) -> String {
    let mut out = format!("{}  {}  {}", r.id, span(r.start, r.end), r.text);
    if !r.current {
        out.push_str(&format!("  ({})", validity(r)));
    }
    out
}

/// `memforest get`'s text: the record, one field a line.
#[must_use]
pub fn render(r: &MemoryRecord) -> String {
    format!(
        "id:     {}\ntext:   {}\ntime:   {}\nstate:  {}\nsource: {}\n",
        r.id,
        r.text,
        span(r.start, r.end),
        validity(r),
        sources(&r.sources)
    )
}

/// What `memforest list` prints: a page of a user's memories, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// The user.
    pub user: String,
    /// Memories skipped before this page (`--offset`).
    pub offset: usize,
    /// The page, newest first.
    pub memories: Vec<MemoryRecord>,
}

/// `memforest list`'s text.
#[must_use]
pub fn render_list(l: &Listed) -> String {
    if l.memories.is_empty() {
        return if l.offset == 0 {
            format!("no memories of user {:?}\n", l.user)
        } else {
            format!(
                "no memories of user {:?} after the first {}\n",
                l.user, l.offset
            )
        };
    }
    l.memories
        .iter()
        .map(|r| format!("{}\n", line(r)))
        .collect()
}
