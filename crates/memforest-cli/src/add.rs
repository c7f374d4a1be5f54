//! `memforest add`: one message (or a file of them) into a session of a user, and what it
//! stored.

use memforest::{AddOptions, Memory, MemoryRecord, Message};
use serde::Serialize;

use crate::error::Result;
use crate::records;

/// What `memforest add` stored.
#[derive(Debug, Clone, Serialize)]
pub struct Stored {
    /// The user.
    pub user: String,
    /// The session the messages were appended to.
    pub session: String,
    /// Messages newly stored.
    pub messages: u64,
    /// Messages skipped because their id was already stored with the same content.
    pub duplicates: u64,
    /// Ids of messages skipped because their id was already stored with other content
    /// (the stored message is kept).
    pub conflicts: Vec<String>,
    /// Parts of the messages whose extraction failed and is retried in the background.
    pub pending: u64,
    /// The memories the new messages created or gave a new occurrence, in order.
    pub memories: Vec<MemoryRecord>,
}

/// Adds `messages` to session `session` of `user` ([`Memory::add_with`], the session
/// belonging to `agent` when given) and reads back the memories they made.
///
/// # Errors
/// [`Memory::add_with`]'s errors (a bad user or agent name, a message over the store's
/// limits, a session of another agent: nothing stored) and read errors.
pub fn run(
    memory: &Memory,
    user: &str,
    session: &str,
    agent: Option<String>,
    messages: &[Message],
) -> Result<Stored> {
    let added = memory.add_with(user, session, messages, &AddOptions { agent, wait: true })?;
    let mut memories = Vec::with_capacity(added.memories.len());
    for &id in &added.memories {
        if let Some(r) = memory.get(user, id)? {
            memories.push(r);
        }
    }
    Ok(Stored {
        user: user.to_owned(),
        session: session.to_owned(),
        messages: added.messages,
        duplicates: added.duplicates,
        conflicts: added.conflicts,
        pending: added.pending,
        memories,
    })
}

/// `memforest add`'s text.
#[must_use]
pub fn render(s: &Stored) -> String {
    let mut out = format!(
        "stored {} in session {:?} of user {:?}",
        records::count(s.messages, "message", "messages"),
        s.session,
        s.user
    );
    if s.duplicates > 0 {
        out.push_str(&format!(
            "; {} already stored",
            records::count(s.duplicates, "message was", "messages were")
        ));
    }
    out.push('\n');
    if !s.conflicts.is_empty() {
        out.push_str(&format!(
            "not stored: message ids already stored with other content: {}\n",
            s.conflicts.join(", ")
        ));
    }
    if s.pending > 0 {
        out.push_str(&format!(
            "extraction of {} failed and is retried in the background\n",
            records::count(s.pending, "part", "parts")
        ));
    }
    let n = u64::try_from(s.memories.len()).unwrap_or(u64::MAX);
    let memories = records::count(n, "memory", "memories");
    if s.memories.is_empty() {
        out.push_str(&format!("{memories} made\n"));
        return out;
    }
    out.push_str(&format!("{memories}:\n"));
    for r in &s.memories {
        out.push_str(&format!("  {}\n", records::line(r)));
    }
    out
}
