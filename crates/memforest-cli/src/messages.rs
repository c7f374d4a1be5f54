//! The messages `memforest add` stores (one from the command line, or a file of them) and
//! `memforest messages` prints.
//!
//! A messages file is JSONL, one message a line (blank lines ignored), in the shape chat
//! APIs use:
//!
//! ```json
//! {"role": "user", "content": "I moved to Berlin.", "name": "Alice", "time": "2024-04-02T09:00:00Z", "id": "m7"}
//! ```
//!
//! - `content` (or `text`): the message, required, non-empty.
//! - `role`: `user` (default), `assistant` or `system`.
//! - `name` (or `speaker`): who said it; empty shows the role.
//! - `time`: when it was said (RFC 3339, `2024-04-02 09:00` in UTC, or a date); default:
//!   the time of the `add`.
//! - `id`: the message's id within its session; a message whose id is already stored is
//!   skipped, so adding the same file twice stores it once.
//! - `metadata`: an object of string values kept with the message (`memforest messages`
//!   prints it).
//!
//! The whole file is read and checked before anything is stored.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use memforest::{Message, Role};
use serde::{Deserialize, Serialize};

use crate::error::{CliError, Result};
use crate::records;
use crate::when;

/// `--role`: who speaks a message given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RoleArg {
    /// The human user (default).
    #[default]
    User,
    /// The agent.
    Assistant,
    /// A system or tool message.
    System,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Self {
        match r {
            RoleArg::User => Self::User,
            RoleArg::Assistant => Self::Assistant,
            RoleArg::System => Self::System,
        }
    }
}

/// The message `memforest add ... TEXT...` stores: the words of `text` joined by spaces,
/// with the `KEY=VALUE` entries of `metadata`.
///
/// # Errors
/// [`CliError::Usage`] when the text is empty or an entry has no `=`.
pub fn from_args(
    text: &[String],
    role: RoleArg,
    speaker: Option<String>,
    time: Option<chrono::DateTime<chrono::Utc>>,
    id: Option<String>,
    metadata: &[String],
) -> Result<Message> {
    let text = text.join(" ");
    if text.trim().is_empty() {
        return Err(CliError::Usage(
            "add needs the message text (TEXT...) or --file FILE".into(),
        ));
    }
    let mut m = Message {
        role: role.into(),
        speaker: speaker.unwrap_or_default(),
        text,
        time,
        id,
        metadata: BTreeMap::new(),
    };
    for entry in metadata {
        let (key, value) = entry
            .split_once('=')
            .ok_or_else(|| CliError::Usage(format!("--meta {entry:?} is not KEY=VALUE")))?;
        m = m.meta(key, value);
    }
    Ok(m)
}

/// A session's stored messages, as `memforest messages` prints them.
#[derive(Debug, Clone, Serialize)]
pub struct Session {
    /// The user.
    pub user: String,
    /// The session.
    pub session: String,
    /// Its messages, in order.
    pub messages: Vec<Message>,
}

/// `memforest messages`' text: one line per message (`[time] id speaker: text`), its
/// metadata indented below it as `key = value`.
#[must_use]
pub fn render(s: &Session) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "{} in session {:?} of user {:?}:\n",
        records::count(s.messages.len() as u64, "message", "messages"),
        s.session,
        s.user
    );
    for m in &s.messages {
        let when = m.time.map_or_else(|| "-".to_owned(), records::time);
        let speaker = if m.speaker.is_empty() {
            m.role.name()
        } else {
            &m.speaker
        };
        let id = m.id.as_deref().unwrap_or("-");
        let _ = writeln!(out, "  [{when}] {id}  {speaker}: {}", m.text);
        for (k, v) in &m.metadata {
            let _ = writeln!(out, "      {k} = {v}");
        }
    }
    out
}

/// One line of a messages file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    #[serde(default)]
    role: Option<String>,
    #[serde(default, alias = "content")]
    text: Option<String>,
    #[serde(default, alias = "speaker")]
    name: Option<String>,
    #[serde(default)]
    time: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
}

/// Reads the messages file `path` (`-`: standard input).
///
/// # Errors
/// [`CliError::Io`] when it cannot be read; [`CliError::Json`] naming the line and column
/// of a line that does not parse (or has a field not listed in the module docs);
/// [`CliError::Format`] naming the line of a message without text, with an unknown role
/// or an unreadable time, and for a file without messages.
pub fn from_file(path: &Path) -> Result<Vec<Message>> {
    let bytes = if path == Path::new("-") {
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .map_err(CliError::io("read", "standard input"))?;
        b
    } else {
        std::fs::read(path).map_err(CliError::io("read", path))?
    };
    let mut out = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad = |reason: String| CliError::Format {
            path: path.to_path_buf(),
            format: "messages JSONL",
            reason: format!("line {}: {reason}", i + 1),
        };
        let l: Line = serde_json::from_slice(line).map_err(|e| CliError::json(path, i, &e))?;
        let role = match l.role.as_deref() {
            None | Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("system") => Role::System,
            Some(other) => {
                return Err(bad(format!(
                    "role {other:?} is not user, assistant or system"
                )))
            }
        };
        let text = l
            .text
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| bad("no `content` (or `text`) string".into()))?;
        let time = l
            .time
            .as_deref()
            .map(when::parse)
            .transpose()
            .map_err(bad)?;
        out.push(Message {
            role,
            speaker: l.name.unwrap_or_default(),
            text,
            time,
            id: l.id,
            metadata: l.metadata,
        });
    }
    if out.is_empty() {
        return Err(CliError::Format {
            path: path.to_path_buf(),
            format: "messages JSONL",
            reason: "no messages".into(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn reads_chat_shaped_lines() {
        let (_d, path) = file(
            "{\"role\":\"user\",\"content\":\"I moved to Berlin.\",\"name\":\"Alice\",\"time\":\"2024-04-02T09:00:00Z\",\"id\":\"m1\"}\n\n\
             {\"role\":\"assistant\",\"text\":\"Welcome!\"}\n",
        );
        let m = from_file(&path).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].speaker, "Alice");
        assert_eq!(m[0].id.as_deref(), Some("m1"));
        assert_eq!(
            m[0].time.map(|t| t.to_rfc3339()).as_deref(),
            Some("2024-04-02T09:00:00+00:00")
        );
        assert_eq!(m[1].role, Role::Assistant);
        assert_eq!(m[1].text, "Welcome!");
        assert!(m[1].time.is_none());
    }

    #[test]
    fn errors_name_the_line_and_what_is_wrong() {
        let cases = [
            (
                "{\"content\":\"a b c\"}\n{\"role\":\"bot\",\"content\":\"x\"}",
                "line 2: role \"bot\"",
            ),
            (
                "{\"content\":\"a b c\"}\n\n{\"role\":\"user\"}",
                "line 3: no `content`",
            ),
            (
                "{\"content\":\"a\",\"time\":\"soon\"}",
                "line 1: \"soon\" is not a time",
            ),
            ("{\"content\":\"a\"}\n{\"contnet\":\"a\"}", "line 2"),
            ("{\"content\":\"a\"", "line 1"),
            ("\n\n", "no messages"),
        ];
        for (text, names) in cases {
            let (_d, path) = file(text);
            let e = from_file(&path).unwrap_err().to_string();
            assert!(e.contains(names), "{text}: {e}");
            assert!(e.contains("m.jsonl"), "{text}: {e}");
        }
    }
}
