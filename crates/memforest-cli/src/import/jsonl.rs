//! The MemForest JSONL format: one session per line (blank lines ignored).
//!
//! ```json
//! {"tenant": "alice", "session": "s1", "start": "2023-05-08T13:56:00Z",
//!  "turns": [{"role": "user", "speaker": "Alice", "text": "I adopted a cat.",
//!             "time": "2023-05-08T13:57:00Z", "id": "s1-t0"}]}
//! ```
//!
//! - `tenant`, `session`: non-empty strings (required); a tenant name is at most 1024
//!   bytes and a session id at most 1024 bytes, neither with a NUL character.
//! - `start`: RFC 3339 text or an integer (microseconds since the Unix epoch); when missing
//!   or unparseable the tenant's previous session start is used (counted).
//! - `turns`: list; each turn has `text` (required, at most 32 KiB of UTF-8; a turn with
//!   empty text is skipped and counted), `role` (`user` | `assistant` | `system`, default
//!   `user`), optional `speaker` (at most 1 KiB), `time` (as `start`; missing inherits the
//!   previous turn's time) and `id` (at most 1024 bytes, no NUL; unique within the session).
//!
//! The whole file is read and checked before anything is stored: a line that does not
//! parse or breaks a limit fails with the file, the line and (for a limit) the session,
//! turn and field, and nothing of the file is stored.
//!
//! Lines are ingested in file order. Several lines may name the same tenant. Several lines
//! may name the same session of a tenant: each later line **appends** its turns to the
//! session. A turn without `id` gets `{session}#turn_{n}`, `n` counting that session's
//! turns over the whole file (so a second line for `s1` continues at the first line's turn
//! count); a turn whose id is already stored in the session is skipped, counted as a
//! duplicate when its role, speaker and text are the same and reported as a conflict when
//! they differ (the stored turn is kept). Ingesting the same file again is therefore a
//! no-op, and a file that grows by appended lines ingests only what is new.

use std::path::Path;

use memforest::memory::session::{Role, Session, Turn};
use serde_json::Value;

use super::turn_ids::TurnIds;
use super::{check, Dataset, Warnings};
use crate::error::{CliError, Result};

/// Parses a JSONL file.
///
/// # Errors
/// [`CliError::Json`] naming the line and column of a line that does not parse;
/// [`CliError::Format`] naming the line of a session without `tenant`, `session` or `turns`;
/// [`CliError::Input`] naming the line (and session, turn and field) of an entry over a
/// limit of the store.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Dataset> {
    let mut out = Dataset::default();
    let mut ids = TurnIds::default();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let v: Value = serde_json::from_slice(line).map_err(|e| CliError::json(path, i, &e))?;
        let bad = |reason: &str| CliError::Format {
            path: path.to_path_buf(),
            format: "jsonl",
            reason: format!("line {}: {reason}", i + 1),
        };
        let field = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        let tenant = field("tenant").ok_or_else(|| bad("no `tenant` string"))?;
        let id = field("session").ok_or_else(|| bad("no `session` string"))?;
        let turns = v
            .get("turns")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no `turns` list"))?;
        let previous = out.last_start(tenant).unwrap_or(0);
        let start = time(v.get("start")).unwrap_or_else(|| {
            out.warnings
                .add("missing or unparseable session start (previous used)");
            previous
        });
        let mut turns: Vec<Turn> = turns
            .iter()
            .filter_map(|t| turn(t, &mut out.warnings))
            .collect();
        let (first, _) = ids.reserve(tenant, id, turns.len());
        for (n, t) in (first..).zip(turns.iter_mut()) {
            t.id.get_or_insert_with(|| TurnIds::id(id, n));
        }
        let session = Session {
            id: id.to_owned(),
            start,
            turns,
        };
        check::entry(path, || format!("line {}", i + 1), tenant, &session)?;
        out.add(tenant, vec![session]);
    }
    Ok(out)
}

/// RFC 3339 text or integer microseconds.
fn time(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.timestamp_micros()),
        _ => None,
    }
}

fn turn(t: &Value, w: &mut Warnings) -> Option<Turn> {
    let text = t.get("text").and_then(Value::as_str).unwrap_or("").trim();
    if text.is_empty() {
        w.add("empty turn (skipped)");
        return None;
    }
    let role = match t.get("role").and_then(Value::as_str) {
        None | Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("system") => Role::System,
        Some(_) => {
            w.add("unknown role (stored as user)");
            Role::User
        }
    };
    let speaker = t.get("speaker").and_then(Value::as_str).unwrap_or("");
    let mut turn = Turn::new(role, speaker, text);
    if t.get("time").is_some() {
        turn.time = time(t.get("time"));
        if turn.time.is_none() {
            w.add("unparseable turn time (inherited)");
        }
    }
    turn.id = t.get("id").and_then(Value::as_str).map(str::to_owned);
    Some(turn)
}
