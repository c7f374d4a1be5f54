//! LoCoMo (`locomo10.json`): an array of samples, each one tenant (`sample_id`) with
//! `conversation.session_N` turn lists, `session_N_date_time` start times and `qa` items
//! whose `evidence` lists `dia_id`s.
//!
//! Tolerated defects (counted in [`Warnings`]): date keys with no session, unparseable or
//! missing session dates (the previous session's time plus one day is used), turns with no
//! text (skipped unless they carry an image caption), image turns (`blip_caption` appended
//! as `[image: ...]`), numeric answers, evidence strings holding several ids (`"D8:6; D9:17"`,
//! `"D9:1 D4:4"`), zero-padded or `D:11:26`-style ids, and ids that match no turn.
//!
//! Turn ids are the `dia_id`s (`D<session>:<turn>`, the turn's position when missing). A
//! `sample_id` repeated in the file is the same tenant (counted): its sessions are
//! ingested again with `Memory::ingest_session`'s append semantics, so turns whose `dia_id` is
//! already stored are skipped as duplicates (or reported as conflicts when their text
//! differs) and only new ones are appended. Every entry is checked against the store's
//! limits while reading (an error names the sample, session and turn).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use memforest::memory::session::{Role, Session, Turn};
use serde_json::Value;

use super::{check, dates, text_of, Dataset, Question, TenantData, Warnings};
use crate::error::{CliError, Result};

const DAY_MICROS: i64 = 86_400_000_000;

/// LoCoMo category numbers as named by the repo's scoring code.
#[must_use]
pub fn category_name(n: u64) -> &'static str {
    match n {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        5 => "adversarial",
        _ => "unknown",
    }
}

/// Parses a LoCoMo document.
///
/// # Errors
/// [`CliError::Format`] when the top level is not an array of samples with a
/// `conversation` object; [`CliError::Input`] naming the sample (and session, turn and
/// field) of an entry over a limit of the store.
pub fn parse(path: &Path, doc: &Value) -> Result<Dataset> {
    let bad = |reason: String| CliError::Format {
        path: path.to_path_buf(),
        format: "locomo",
        reason,
    };
    let samples = doc
        .as_array()
        .ok_or_else(|| bad("the top level is not an array of samples".into()))?;
    let mut out = Dataset::default();
    for (i, sample) in samples.iter().enumerate() {
        let conv = sample
            .get("conversation")
            .and_then(Value::as_object)
            .ok_or_else(|| bad(format!("sample {i} has no `conversation` object")))?;
        let name = match sample.get("sample_id").and_then(Value::as_str) {
            Some(s) if !s.is_empty() => s.to_owned(),
            _ => {
                out.warnings
                    .add("sample without sample_id (named conv-<index>)");
                format!("conv-{i}")
            }
        };
        let (tenant, ids) = sessions(&name, conv, &mut out.warnings);
        if let Some(qa) = sample.get("qa").and_then(Value::as_array) {
            for item in qa {
                if let Some(q) = question(&name, item, &ids, &mut out.warnings) {
                    out.questions.push(q);
                }
            }
        }
        for session in &tenant.sessions {
            check::entry(path, || format!("sample {i}"), &name, session)?;
        }
        if out.add(&name, tenant.sessions) {
            out.warnings
                .add("repeated sample_id (sessions appended to the same tenant)");
        }
    }
    Ok(out)
}

/// The sessions of one conversation, in session-number order, and every turn id.
fn sessions(
    name: &str,
    conv: &serde_json::Map<String, Value>,
    w: &mut Warnings,
) -> (TenantData, HashSet<String>) {
    let mut numbered: BTreeMap<u32, &Vec<Value>> = BTreeMap::new();
    for (key, value) in conv {
        let Some(n) = key
            .strip_prefix("session_")
            .and_then(|r| r.parse::<u32>().ok())
        else {
            continue;
        };
        match value.as_array() {
            Some(turns) => {
                numbered.insert(n, turns);
            }
            None => w.add("session that is not a list (skipped)"),
        }
    }
    for key in conv.keys() {
        if let Some(n) = key
            .strip_prefix("session_")
            .and_then(|r| r.strip_suffix("_date_time"))
            .and_then(|r| r.parse::<u32>().ok())
        {
            if !numbered.contains_key(&n) {
                w.add("session date key with no session");
            }
        }
    }
    let mut ids = HashSet::new();
    let mut sessions = Vec::new();
    let mut last_start: Option<i64> = None;
    for (n, turns) in numbered {
        let date = conv
            .get(&format!("session_{n}_date_time"))
            .and_then(Value::as_str)
            .and_then(dates::locomo);
        let start = date.unwrap_or_else(|| {
            w.add("missing or unparseable session date (previous + 1 day)");
            last_start.map_or(0, |t| t + DAY_MICROS)
        });
        last_start = Some(start);
        let mut out_turns = Vec::with_capacity(turns.len());
        for (j, t) in turns.iter().enumerate() {
            if let Some(turn) = self::turn(t, &format!("D{n}:{}", j + 1), w) {
                if let Some(id) = &turn.id {
                    ids.insert(id.clone());
                }
                out_turns.push(turn);
            }
        }
        sessions.push(Session {
            id: format!("session_{n}"),
            start,
            turns: out_turns,
        });
    }
    (
        TenantData {
            name: name.to_owned(),
            sessions,
        },
        ids,
    )
}

/// One turn; `None` (counted) when it has neither text nor caption.
fn turn(t: &Value, default_id: &str, w: &mut Warnings) -> Option<Turn> {
    let speaker = t.get("speaker").and_then(Value::as_str).unwrap_or("");
    let text = t.get("text").and_then(Value::as_str).unwrap_or("").trim();
    let caption = t.get("blip_caption").and_then(Value::as_str).map(str::trim);
    let text = match caption {
        Some(c) if !c.is_empty() => {
            w.add("image turn (blip_caption used as text)");
            if text.is_empty() {
                format!("[image: {c}]")
            } else {
                format!("{text} [image: {c}]")
            }
        }
        _ => text.to_owned(),
    };
    if text.is_empty() {
        w.add("empty turn (skipped)");
        return None;
    }
    let id = match t.get("dia_id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => {
            w.add("turn without dia_id (position used)");
            default_id.to_owned()
        }
    };
    // Two people talk in LoCoMo, neither an assistant: both speak as users, each under
    // their own name, so each one's first-person statements are about themselves.
    let mut turn = Turn::new(Role::User, speaker, text);
    turn.id = Some(id);
    Some(turn)
}

/// One QA item, with its evidence normalised and matched against `ids`.
fn question(
    tenant: &str,
    item: &Value,
    ids: &HashSet<String>,
    w: &mut Warnings,
) -> Option<Question> {
    let Some(text) = item.get("question").and_then(Value::as_str) else {
        w.add("qa item without question (skipped)");
        return None;
    };
    let category = item.get("category").and_then(Value::as_u64).unwrap_or(0);
    let answer = match text_of(item.get("answer")) {
        Some(a) => {
            if item.get("answer").is_some_and(Value::is_number) {
                w.add("numeric answer");
            }
            a
        }
        None => text_of(item.get("adversarial_answer")).unwrap_or_default(),
    };
    let mut evidence = Vec::new();
    for raw in item
        .get("evidence")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        for id in split_evidence(raw) {
            if ids.contains(&id) {
                if !evidence.contains(&id) {
                    evidence.push(id);
                }
            } else {
                w.add("evidence id that matches no turn");
            }
        }
    }
    Some(Question {
        tenant: tenant.to_owned(),
        text: text.to_owned(),
        category: category_name(category).to_owned(),
        answer,
        evidence_turns: evidence,
        evidence_sessions: Vec::new(),
        time: None,
    })
}

/// Splits an evidence string into normalised `D<s>:<t>` ids: several ids separated by
/// `;`, `,` or spaces; `D:11:26` -> `D11:26`; zero padding dropped (`D30:05` -> `D30:5`).
/// Pieces that are not of that shape are returned as they are (and then match no turn).
#[must_use]
pub fn split_evidence(raw: &str) -> Vec<String> {
    raw.split([';', ',', ' '])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| normalise(p).unwrap_or_else(|| p.to_owned()))
        .collect()
}

fn normalise(p: &str) -> Option<String> {
    let rest = p.strip_prefix('D')?.trim_start_matches(':');
    let (s, t) = rest.split_once(':')?;
    let (s, t) = (s.parse::<u32>().ok()?, t.parse::<u32>().ok()?);
    Some(format!("D{s}:{t}"))
}
