//! LongMemEval (`longmemeval_oracle.json`, `longmemeval_s_cleaned.json`): an array of
//! question instances, each one tenant (`question_id`) with its own history: parallel lists
//! `haystack_session_ids`, `haystack_dates`, `haystack_sessions`. Evidence: turns with
//! `has_answer: true` (turn id `<session id>#turn_<index in the file>`) and the sessions in
//! `answer_session_ids`.
//!
//! Sessions are ingested in date order (the oracle file does not keep it). Tolerated defects
//! (counted): missing or unparseable dates (the previous session's time is used), lists of
//! different lengths (the extra entries are dropped), repeated session ids and question
//! ids, empty turns (skipped), unknown roles (stored as system), numeric answers, answer
//! session ids that match no session.
//!
//! Repeats follow `Memory::ingest_session`'s append semantics: a `question_id` repeated in the
//! file is the same tenant, a session id repeated within a tenant the same session. The
//! file has no turn ids, so a turn's id is `<session id>#turn_<n>`, `n` its index in the
//! session's list counted on from where the session's previous appearance in the file
//! ended ([`super::turn_ids::TurnIds`]): a repeated session's turns are appended, nothing
//! is dropped, and importing the same file again is a no-op. Every entry is checked
//! against the store's limits while reading (an error names the instance, session and
//! turn).

use std::collections::HashSet;
use std::path::Path;

use memforest::memory::session::{Role, Session, Turn};
use serde_json::Value;

use super::turn_ids::TurnIds;
use super::{check, dates, text_of, Dataset, Question, TenantData, Warnings};
use crate::error::{CliError, Result};

/// Parses a LongMemEval document.
///
/// # Errors
/// [`CliError::Format`] when the top level is not an array of objects with a
/// `haystack_sessions` list; [`CliError::Input`] naming the instance (and session, turn and
/// field) of an entry over a limit of the store.
pub fn parse(path: &Path, doc: &Value) -> Result<Dataset> {
    let bad = |reason: String| CliError::Format {
        path: path.to_path_buf(),
        format: "longmemeval",
        reason,
    };
    let items = doc
        .as_array()
        .ok_or_else(|| bad("the top level is not an array of question instances".into()))?;
    let mut out = Dataset::default();
    let mut turn_ids = TurnIds::default();
    for (i, item) in items.iter().enumerate() {
        let sessions = item
            .get("haystack_sessions")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(format!("instance {i} has no `haystack_sessions` list")))?;
        let name = match item.get("question_id").and_then(Value::as_str) {
            Some(s) if !s.is_empty() => s.to_owned(),
            _ => {
                out.warnings
                    .add("instance without question_id (named q-<index>)");
                format!("q-{i}")
            }
        };
        let (tenant, evidence_turns) =
            history(&name, item, sessions, &mut turn_ids, &mut out.warnings);
        let known: HashSet<&str> = tenant.sessions.iter().map(|s| s.id.as_str()).collect();
        let mut evidence_sessions = Vec::new();
        for id in strings(item.get("answer_session_ids")) {
            if known.contains(id.as_str()) {
                evidence_sessions.push(id);
            } else {
                out.warnings
                    .add("answer session id that matches no session");
            }
        }
        if item.get("answer").is_some_and(Value::is_number) {
            out.warnings.add("numeric answer");
        }
        out.questions.push(Question {
            tenant: name.clone(),
            text: text_of(item.get("question")).unwrap_or_default(),
            category: item
                .get("question_type")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned(),
            answer: text_of(item.get("answer")).unwrap_or_default(),
            evidence_turns,
            evidence_sessions,
            time: item
                .get("question_date")
                .and_then(Value::as_str)
                .and_then(dates::longmemeval),
        });
        for session in &tenant.sessions {
            check::entry(path, || format!("instance {i}"), &name, session)?;
        }
        if out.add(&name, tenant.sessions) {
            out.warnings
                .add("repeated question_id (sessions appended to the same tenant)");
        }
    }
    Ok(out)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The instance's sessions in date order, and the ids of its `has_answer` turns.
fn history(
    name: &str,
    item: &Value,
    sessions: &[Value],
    turn_ids: &mut TurnIds,
    w: &mut Warnings,
) -> (TenantData, Vec<String>) {
    let ids = strings(item.get("haystack_session_ids"));
    let dates = strings(item.get("haystack_dates"));
    if ids.len() != sessions.len() || dates.len() != sessions.len() {
        w.add("haystack lists of different lengths");
    }
    let mut out = Vec::with_capacity(sessions.len());
    let mut evidence = Vec::new();
    let mut last = 0;
    for (i, turns) in sessions.iter().enumerate() {
        let Some(turns) = turns.as_array() else {
            w.add("session that is not a list (skipped)");
            continue;
        };
        let id = ids.get(i).cloned().unwrap_or_else(|| {
            w.add("session without id (named session-<index>)");
            format!("session-{i}")
        });
        let (first, repeated) = turn_ids.reserve(name, &id, turns.len());
        if repeated {
            w.add("repeated session id (turns appended to it)");
        }
        let start = dates
            .get(i)
            .and_then(|d| dates::longmemeval(d))
            .unwrap_or_else(|| {
                w.add("missing or unparseable session date (previous used)");
                last
            });
        last = start;
        let mut out_turns = Vec::with_capacity(turns.len());
        for (j, t) in turns.iter().enumerate() {
            let text = t
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim();
            if text.is_empty() {
                w.add("empty turn (skipped)");
                continue;
            }
            let role = match t.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => {
                    w.add("unknown role (stored as system)");
                    Role::System
                }
            };
            let mut turn = Turn::new(role, "", text);
            let tid = TurnIds::id(&id, first.saturating_add(j));
            if t.get("has_answer").and_then(Value::as_bool) == Some(true) {
                evidence.push(tid.clone());
            }
            turn.id = Some(tid);
            out_turns.push(turn);
        }
        out.push(Session {
            id,
            start,
            turns: out_turns,
        });
    }
    out.sort_by_key(|s| s.start);
    (
        TenantData {
            name: name.to_owned(),
            sessions: out,
        },
        evidence,
    )
}
