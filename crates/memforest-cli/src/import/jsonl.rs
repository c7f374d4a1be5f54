//! The MemForest JSONL format: one session per line (blank lines ignored).
//!
//! ```json
//! {"tenant": "alice", "session": "s1", "start": "2023-05-08T13:56:00Z",
//!  "turns": [{"role": "user", "speaker": "Alice", "text": "I adopted a cat.",
//!             "time": "2023-05-08T13:57:00Z", "id": "s1-t0"}]}
//! ```
//!
//! - `tenant`, `session`: non-empty strings (required).
//! - `start`: RFC 3339 text or an integer (microseconds since the Unix epoch); when missing
//!   or unparseable the tenant's previous session start is used (counted).
//! - `turns`: list; each turn has `text` (required, a turn with empty text is skipped and
//!   counted), `role` (`user` | `assistant` | `system`, default `user`), optional `speaker`,
//!   `time` (as `start`; missing inherits the previous turn's time) and `id`.
//!
//! Several lines may name the same tenant; sessions are ingested in file order.

use std::path::Path;

use memforest_engine::memory::session::{Role, Session, Turn};
use serde_json::Value;

use super::{Dataset, TenantData, Warnings};
use crate::error::{CliError, Result};

/// Parses a JSONL file.
///
/// # Errors
/// [`CliError::Json`] naming the line and column of a line that does not parse;
/// [`CliError::Format`] naming the line of a session without `tenant`, `session` or `turns`.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Dataset> {
    let mut out = Dataset::default();
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
        let pos = match out.tenants.iter().position(|t| t.name == tenant) {
            Some(p) => p,
            None => {
                out.tenants.push(TenantData {
                    name: tenant.to_owned(),
                    sessions: Vec::new(),
                });
                out.tenants.len() - 1
            }
        };
        let previous = out
            .tenants
            .get(pos)
            .and_then(|t| t.sessions.last())
            .map_or(0, |s| s.start);
        let start = time(v.get("start")).unwrap_or_else(|| {
            out.warnings
                .add("missing or unparseable session start (previous used)");
            previous
        });
        let session = Session {
            id: id.to_owned(),
            start,
            turns: turns
                .iter()
                .filter_map(|t| turn(t, &mut out.warnings))
                .collect(),
        };
        if let Some(t) = out.tenants.get_mut(pos) {
            t.sessions.push(session);
        }
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
