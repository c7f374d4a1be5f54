//! `memforest forget`: a memory, a message, a session or everything of a user, through the
//! `Memory` API's deletes, which fail for what does not exist.

use memforest::{Memory, MemoryError, MemoryId};
use serde::Serialize;

use crate::error::{CliError, Result};
use crate::records::count;

/// What to forget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One memory (its source messages stay).
    Memory(MemoryId),
    /// A message of a session (by id) and the memories only it supported.
    Message {
        /// The session.
        session: String,
        /// The message id.
        id: String,
    },
    /// A session: its messages and the memories only they supported.
    Session(String),
    /// Everything of the user.
    User,
}

/// What `memforest forget` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Forgotten {
    /// The user.
    pub user: String,
    /// What was forgotten: `memory <id>`, `message <id> of session <id>`, `session <id>`
    /// or `everything`.
    pub forgot: String,
    /// Messages deleted.
    pub messages: u64,
    /// Memories removed.
    pub memories: u64,
    /// Memories that lost some sources but remain.
    pub memories_updated: u64,
}

/// A memory id as `--memory` takes it: 16 hex digits (what `search`, `list` and `add`
/// print), or the decimal fact id older versions of `query` printed.
///
/// # Errors
/// [`CliError::Usage`] naming the value.
pub fn memory_id(s: &str) -> Result<MemoryId> {
    if let Ok(id) = s.parse::<MemoryId>() {
        return Ok(id);
    }
    s.parse::<u64>()
        .ok()
        .and_then(|n| format!("{n:016x}").parse().ok())
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{s:?} is not a memory id (16 hex digits, as search and list print)"
            ))
        })
}

/// Forgets `target` of `user`.
///
/// # Errors
/// [`memforest::MemoryError::NotFound`] (as [`CliError::Memory`]) when `user` has no such
/// memory or session, or holds nothing (nothing changed); a bad user name; storage errors.
pub fn run(memory: &Memory, user: &str, target: &Target) -> Result<Forgotten> {
    let (deleted, forgot) = match target {
        Target::Memory(id) => (memory.delete(user, *id)?, format!("memory {id}")),
        Target::Message { session, id } => (
            memory.delete_message(user, session, id)?,
            format!("message {id} of session {session}"),
        ),
        Target::Session(s) => (memory.delete_session(user, s)?, format!("session {s}")),
        Target::User => match memory.delete_user(user) {
            Ok(d) => (d, "everything".to_owned()),
            Err(MemoryError::NotFound { .. }) => {
                return Err(CliError::Usage(format!(
                    "no user {user:?} in this store: nothing to forget"
                )))
            }
            Err(e) => return Err(e.into()),
        },
    };
    Ok(Forgotten {
        user: user.to_owned(),
        forgot,
        messages: deleted.messages,
        memories: deleted.memories,
        memories_updated: deleted.memories_updated,
    })
}

/// `memforest forget`'s text.
#[must_use]
pub fn render(f: &Forgotten) -> String {
    let mut out = format!(
        "forgot {} of user {:?}: {} and {} removed",
        f.forgot,
        f.user,
        count(f.messages, "message", "messages"),
        count(f.memories, "memory", "memories"),
    );
    if f.memories_updated > 0 {
        out.push_str(&format!(
            ", {} kept with fewer sources",
            count(f.memories_updated, "memory", "memories")
        ));
    }
    out.push_str(" (`memforest compact --purge` erases the bytes)\n");
    out
}

#[cfg(test)]
mod tests {
    use super::memory_id;

    #[test]
    fn memory_ids_in_hex_or_decimal() {
        let hex = memory_id("00000000000000ff").unwrap();
        assert_eq!(memory_id("255").unwrap(), hex);
        let e = memory_id("cat").unwrap_err().to_string();
        assert!(e.contains("\"cat\" is not a memory id"), "{e}");
    }
}
