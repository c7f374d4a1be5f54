//! [`Message`]: one message given to [`crate::Memory::add`].

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::memory::session::{Role, Turn};

/// One message of an exchange: who said what, and when.
///
/// Its JSON form is `{"role", "speaker"?, "text", "time"? (RFC 3339), "id"?,
/// "metadata"?}`; a message in the OpenAI, Mem0 and `memforest add --file` form, with
/// `content` for the text and `name` for the speaker, reads as well.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// The speaker's role.
    pub role: Role,
    /// The speaker's name (e.g. "Alice"); empty renders as the role.
    #[serde(default, alias = "name")]
    pub speaker: String,
    /// The text: 1..=32 KiB of UTF-8 (`memory::limits`).
    #[serde(alias = "content")]
    pub text: String,
    /// When it was said; `None` is the time of the `add` call. Stored to the microsecond
    /// (finer digits are dropped), as every time in the store.
    #[serde(default)]
    pub time: Option<DateTime<Utc>>,
    /// The caller's id for the message, unique within its session: an `add` that sends an
    /// id already stored skips that message (so a retried `add` stores nothing twice).
    /// `None` numbers the message after the session's stored messages, as
    /// `{session}#turn_{n}`; such ids, as [`crate::Memory::messages`] returns them, may be
    /// sent back (`MemoryError::ReservedId` names the one case refused).
    #[serde(default)]
    pub id: Option<String>,
    /// The caller's key-value pairs (e.g. `"channel": "email"`), stored with the message
    /// and returned by [`crate::Memory::messages`]: at most 64 entries, keys of 1..=256
    /// bytes, values of at most 4 KiB (`memory::limits`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

impl Message {
    /// A message of `role`.
    #[must_use]
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            speaker: String::new(),
            text: text.into(),
            time: None,
            id: None,
            metadata: BTreeMap::new(),
        }
    }

    /// A message from the user.
    #[must_use]
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, text)
    }

    /// A message from the assistant.
    #[must_use]
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, text)
    }

    /// The same message said by `speaker`.
    #[must_use]
    pub fn by(mut self, speaker: impl Into<String>) -> Self {
        self.speaker = speaker.into();
        self
    }

    /// The same message said at `time`.
    #[must_use]
    pub fn at(mut self, time: DateTime<Utc>) -> Self {
        self.time = Some(time);
        self
    }

    /// The same message with the caller's id `id`.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The same message with metadata entry `key` = `value` (replacing an earlier one).
    #[must_use]
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// The turn it becomes: `id` and `time` (microseconds) resolved by the caller.
    pub(crate) fn turn(&self, id: Option<String>, time: i64) -> Turn {
        let speaker = if self.speaker.is_empty() {
            self.role.name().to_owned()
        } else {
            self.speaker.clone()
        };
        Turn {
            role: self.role,
            speaker,
            text: self.text.clone(),
            time: Some(time),
            id,
            metadata: self.metadata.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The OpenAI and Mem0 form (`content`, `name`) reads as the native one does.
    #[test]
    fn a_message_reads_from_either_json_form() {
        let native: Result<Message, _> =
            serde_json::from_str(r#"{"role":"user","speaker":"Ann","text":"I like tea."}"#);
        let openai: Result<Message, _> =
            serde_json::from_str(r#"{"role":"user","name":"Ann","content":"I like tea."}"#);
        assert_eq!(native.ok(), Some(Message::user("I like tea.").by("Ann")));
        assert_eq!(openai.ok(), Some(Message::user("I like tea.").by("Ann")));
    }
}
