//! [`Session`], [`Turn`] and [`Role`]: the conversation input of `Memory::ingest_session`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Who spoke a turn. In JSON it is `"user"`, `"assistant"` or `"system"` (the capitalized
/// names are read too); stored records keep the variant's index, so the spelling is free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    #[serde(alias = "User")]
    User,
    /// The agent.
    #[serde(alias = "Assistant")]
    Assistant,
    /// A system or tool message.
    #[serde(alias = "System")]
    System,
}

impl Role {
    /// The role's name in lower case (`"user"`, `"assistant"`, `"system"`): what a turn
    /// whose speaker has no name is shown as.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::System => "system",
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// The speaker's role.
    pub role: Role,
    /// The speaker's display name (e.g. "Caroline"), at most 1 KiB; empty when unknown.
    pub speaker: String,
    /// The message text: 1..=`memory::limits::MAX_TURN_TEXT_BYTES` (32 KiB) of UTF-8.
    pub text: String,
    /// When it was said, microseconds since the Unix epoch; `None` inherits the previous
    /// turn's time (or the session start).
    pub time: Option<i64>,
    /// The caller's turn id (1..=1024 bytes, no NUL), unique within the session: a turn
    /// whose id is already stored is skipped by `Memory::ingest_session`. `None` gets
    /// `{session}#turn_{i}`, `i` the turn's position in `Session::turns`.
    pub id: Option<String>,
    /// The caller's key-value pairs, stored with the turn and returned with it
    /// (`Memory::messages`); at most `memory::limits::MAX_METADATA_ENTRIES` entries.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
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
            metadata: BTreeMap::new(),
        }
    }
}

/// A conversation session: its id, start time and turns in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// The caller's session id (1..=1024 bytes, no NUL): a session id seen again within a
    /// tenant is the same session, and its new turns are appended.
    pub id: String,
    /// Session start, microseconds since the Unix epoch.
    pub start: i64,
    /// The turns in order. `Memory::ingest_session` appends those whose ids are not stored
    /// yet and skips the others (re-ingesting a session or a prefix of it is a no-op).
    pub turns: Vec<Turn>,
}
