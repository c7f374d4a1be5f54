//! The input limits of `Memory::ingest_session`, checked by [`check_session`] before anything
//! is written, so that every accepted turn can be stored, read back and extracted.
//!
//! Where the limits come from:
//! - A session-tree leaf is a cell's turns as `speaker: text` lines, and a heuristic fact is
//!   `speaker: sentence`; both must fit a MemTree page text (`memforest_tree::page::
//!   MAX_TEXT_BYTES`, 1 MiB) with room for the `[Mon YYYY - Mon YYYY | label]` headers that
//!   single-child summaries stack on top ([`LEAF_TEXT_BUDGET`]; cells are cut to it).
//! - Every word of a fact becomes a lexical-index key (`Postings`: tenant, `t`, the word's
//!   lower-cased stem, `0`, fact id), and an engine key is at most 64 KiB. Lower-casing
//!   grows a UTF-8 word by at most half (`İ`, two bytes, becomes three), so a turn text of
//!   [`MAX_TURN_TEXT_BYTES`] keeps every such key under the limit with room for a
//!   1024-byte tenant name.
//! - A stored record must decode: the record codec refuses values over
//!   `memforest_codec::serde_codec::DECODE_LIMIT` (16 MiB), far above one turn.
//! - One call's raw turns are one WAL batch (at most 1 GiB), so a call carries at most
//!   [`MAX_CALL_TEXT_BYTES`] of text; append semantics make several calls equivalent to one.

use std::collections::BTreeMap;

use crate::memory::session::Session;
use memforest_engine::{check_len, check_name, InputError, TenantId};

/// Longest turn text, in UTF-8 bytes (32 KiB). Split longer texts into several turns.
/// A search's question is held to the same limit (`Memory::query`).
pub const MAX_TURN_TEXT_BYTES: usize = 32 * 1024;
/// Longest session id and turn id, in bytes (1 KiB).
pub const MAX_ID_BYTES: usize = 1024;
/// Longest speaker name, in bytes (1 KiB).
pub const MAX_SPEAKER_BYTES: usize = 1024;
/// Most metadata entries of one turn (64).
pub const MAX_METADATA_ENTRIES: usize = 64;
/// Longest metadata key, in bytes (256; at least one byte, no NUL).
pub const MAX_METADATA_KEY_BYTES: usize = 256;
/// Longest metadata value, in bytes (4 KiB).
pub const MAX_METADATA_VALUE_BYTES: usize = 4096;
/// Most turn text in one `ingest_session` call, in bytes (64 MiB).
pub const MAX_CALL_TEXT_BYTES: usize = 64 << 20;
/// Most bytes of a session-tree leaf (a cell's `speaker: text` lines): a MemTree page text
/// less 64 KiB of headroom for the summary headers stacked over a single child.
pub const LEAF_TEXT_BUDGET: usize = memforest_tree::page::MAX_TEXT_BYTES - (64 << 10);

/// Where in a session an input check failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnAt {
    /// Index in `Session::turns`.
    pub index: usize,
    /// The caller's turn id, if it gave one.
    pub id: Option<String>,
}

/// A session refused by [`check_session`]: which session, which turn, which field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session {}{}: {source}", quoted(session), turn_label(turn.as_ref()))]
pub struct SessionInputError {
    /// The session id (as given; the message shortens it).
    pub session: String,
    /// The turn, when the problem is in one.
    pub turn: Option<TurnAt>,
    /// What is wrong.
    #[source]
    pub source: InputError,
}

/// `text` in quotes, cut to 64 characters (an over-long id stays readable in a message).
fn quoted(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(64).collect();
    if chars.next().is_some() {
        format!("{head:?}...")
    } else {
        format!("{head:?}")
    }
}

fn turn_label(turn: Option<&TurnAt>) -> String {
    match turn {
        None => String::new(),
        Some(TurnAt { index, id: None }) => format!(", turn {index}"),
        Some(TurnAt {
            index,
            id: Some(id),
        }) => format!(", turn {index} (id {})", quoted(id)),
    }
}

/// Refuses a name that is only whitespace (`" "`, `"\t\n"`) for a write: it would name a
/// user or session apart from every other, yet one nobody can tell from an empty name.
/// Names with other characters around whitespace (`" alice "`) stay names of their own.
///
/// # Errors
/// [`InputError::Blank`] naming `field`.
pub fn check_not_blank(field: &'static str, name: &[u8]) -> Result<(), InputError> {
    if std::str::from_utf8(name).is_ok_and(|s| !s.is_empty() && s.trim().is_empty()) {
        return Err(InputError::Blank { field });
    }
    Ok(())
}

/// Checks that the user `tenant` may be written to: its name is not only whitespace
/// ([`check_not_blank`]; its other limits are `TenantId`'s). Reads of such a user, stored
/// before this check, still work.
///
/// # Errors
/// [`InputError::Blank`] for the field `user id`.
pub fn check_user(tenant: &TenantId) -> Result<(), InputError> {
    check_not_blank("user id", tenant.name())
}

/// Refuses a NUL byte in `field`, as [`check_name`] does for names, without requiring a
/// value (an empty speaker is rendered as the role).
fn check_no_nul(field: &'static str, value: &[u8]) -> Result<(), InputError> {
    match value.iter().position(|&b| b == 0) {
        Some(at) => Err(InputError::Nul { field, at }),
        None => Ok(()),
    }
}

/// Checks `session` against the limits above: a session id of 1..=[`MAX_ID_BYTES`] bytes
/// without NUL and not only whitespace; per turn a text of 1..=[`MAX_TURN_TEXT_BYTES`]
/// bytes, not only whitespace, a speaker of at most [`MAX_SPEAKER_BYTES`] without NUL, an id (when given) of 1..=[`MAX_ID_BYTES`] without NUL, at most
/// [`MAX_METADATA_ENTRIES`] metadata entries with keys of 1..=[`MAX_METADATA_KEY_BYTES`]
/// without NUL and values of at most [`MAX_METADATA_VALUE_BYTES`]; at most
/// [`MAX_CALL_TEXT_BYTES`] of text in all. Reads nothing, writes nothing.
///
/// # Errors
/// [`SessionInputError`] naming the session, the first offending turn and the field.
pub fn check_session(session: &Session) -> Result<(), SessionInputError> {
    let fail = |turn: Option<TurnAt>, source| SessionInputError {
        session: session.id.clone(),
        turn,
        source,
    };
    check_name("session id", session.id.as_bytes(), MAX_ID_BYTES)
        .and_then(|()| check_not_blank("session id", session.id.as_bytes()))
        .map_err(|e| fail(None, e))?;
    let mut total = 0usize;
    for (index, turn) in session.turns.iter().enumerate() {
        let at = || TurnAt {
            index,
            id: turn.id.clone(),
        };
        let text = if turn.text.is_empty() {
            Err(InputError::Empty { field: "turn text" })
        } else {
            check_len("turn text", turn.text.len(), MAX_TURN_TEXT_BYTES)
                .and_then(|()| check_not_blank("turn text", turn.text.as_bytes()))
        };
        text.and_then(|()| check_len("speaker", turn.speaker.len(), MAX_SPEAKER_BYTES))
            .and_then(|()| check_no_nul("speaker", turn.speaker.as_bytes()))
            .and_then(|()| match &turn.id {
                Some(id) => check_name("turn id", id.as_bytes(), MAX_ID_BYTES),
                None => Ok(()),
            })
            .and_then(|()| check_metadata(&turn.metadata))
            .map_err(|e| fail(Some(at()), e))?;
        total = total.saturating_add(turn.text.len());
    }
    check_len(
        "session text (all turns of one call)",
        total,
        MAX_CALL_TEXT_BYTES,
    )
    .map_err(|e| fail(None, e))
}

/// Checks one turn's metadata against the limits above.
fn check_metadata(metadata: &BTreeMap<String, String>) -> Result<(), InputError> {
    if metadata.len() > MAX_METADATA_ENTRIES {
        return Err(InputError::TooMany {
            field: "metadata",
            count: metadata.len(),
            limit: MAX_METADATA_ENTRIES,
        });
    }
    for (key, value) in metadata {
        check_name("metadata key", key.as_bytes(), MAX_METADATA_KEY_BYTES)?;
        check_len("metadata value", value.len(), MAX_METADATA_VALUE_BYTES)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::session::{Role, Turn};

    fn session(turns: Vec<Turn>) -> Session {
        Session {
            id: "s1".into(),
            start: 0,
            turns,
        }
    }

    #[test]
    fn a_turn_over_the_limit_is_named_with_its_field() {
        let ok = Turn::new(Role::User, "A", "hi");
        let mut long = Turn::new(Role::User, "A", "x".repeat(MAX_TURN_TEXT_BYTES + 1));
        long.id = Some("t1".into());
        assert_eq!(check_session(&session(vec![ok.clone()])), Ok(()));
        let e = check_session(&session(vec![ok.clone(), long])).unwrap_err();
        assert_eq!(e.turn.as_ref().map(|t| t.index), Some(1));
        assert_eq!(
            e.to_string(),
            "session \"s1\", turn 1 (id \"t1\"): turn text of 32769 bytes exceeds the 32768-byte limit"
        );
        let mut nul = ok.clone();
        nul.id = Some("a\0".into());
        assert!(matches!(
            check_session(&session(vec![nul])).unwrap_err().source,
            InputError::Nul {
                field: "turn id",
                at: 1
            }
        ));
        let empty = Turn::new(Role::User, "A", "");
        assert!(matches!(
            check_session(&session(vec![empty])).unwrap_err().source,
            InputError::Empty { field: "turn text" }
        ));
        let mut s = session(vec![ok]);
        s.id = "x".repeat(MAX_ID_BYTES + 1);
        let e = check_session(&s).unwrap_err();
        assert!(e.turn.is_none());
        assert!(
            e.to_string().contains("\"...: session id of 1025 bytes"),
            "{e}"
        );
    }
}
