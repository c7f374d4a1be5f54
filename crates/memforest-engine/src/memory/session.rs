//! [`Session`], [`Turn`] and [`Role`]: the conversation input of `Db::ingest_session`.

use serde::{Deserialize, Serialize};

/// Who spoke a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// The human user.
    User,
    /// The agent.
    Assistant,
    /// A system or tool message.
    System,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// The speaker's role.
    pub role: Role,
    /// The speaker's display name (e.g. "Caroline"); empty when unknown.
    pub speaker: String,
    /// The message text.
    pub text: String,
    /// When it was said, microseconds since the Unix epoch; `None` inherits the previous
    /// turn's time (or the session start).
    pub time: Option<i64>,
    /// The caller's turn id; `None` gets `{session}#turn_{index}` (MemForest's default).
    pub id: Option<String>,
}

impl Turn {
    /// A turn with no explicit time or id.
    #[must_use]
    pub fn new(role: Role, speaker: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            role,
            speaker: speaker.into(),
            text: text.into(),
            time: None,
            id: None,
        }
    }
}

/// A conversation session: its id, start time and turns in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// The caller's session id (unique within a tenant).
    pub id: String,
    /// Session start, microseconds since the Unix epoch.
    pub start: i64,
    /// The turns in order. Re-ingesting a prefix of an ingested session is a no-op;
    /// extra turns at the end extend it.
    pub turns: Vec<Turn>,
}
