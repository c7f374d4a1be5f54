//! Loaders for the public conversation datasets used by the smoke test and the ingest
//! benchmark: LoCoMo (`locomo10.json`, one tenant per conversation) and LongMemEval
//! (`longmemeval_oracle.json`, one tenant per question's history). Schemas: the READMEs
//! under `shared/data/`.

use std::path::Path;

use chrono::NaiveDateTime;
use serde_json::Value;

use crate::memory::session::{Role, Session, Turn};

/// One tenant's sessions.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// Tenant name (sample id or question id).
    pub name: String,
    /// Sessions in file order.
    pub sessions: Vec<Session>,
}

/// Why a dataset could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// The file could not be read.
    #[error("read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not JSON of the expected shape.
    #[error("{path}: {what}")]
    Shape {
        /// The file.
        path: String,
        /// What was wrong (JSON error with line/column, or the missing field).
        what: String,
    },
}

fn read(path: &Path) -> Result<Value, DatasetError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| DatasetError::Io {
        path: p.clone(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| DatasetError::Shape {
        path: p,
        what: e.to_string(),
    })
}

fn micros(text: &str, format: &str) -> Option<i64> {
    NaiveDateTime::parse_from_str(text.trim(), format)
        .ok()
        .map(|d| d.and_utc().timestamp_micros())
}

/// Loads LoCoMo: `speaker_a` turns become `User`, `speaker_b` turns `Assistant`; a turn's
/// text gets its image caption appended; session times come from `session_N_date_time`.
///
/// # Errors
/// [`DatasetError`] for unreadable or misshapen files.
pub fn locomo(path: &Path) -> Result<Vec<Conversation>, DatasetError> {
    let shape = |what: &str| DatasetError::Shape {
        path: path.display().to_string(),
        what: what.to_owned(),
    };
    let root = read(path)?;
    let samples = root
        .as_array()
        .ok_or_else(|| shape("top level is not an array"))?;
    let mut out = Vec::new();
    for sample in samples {
        let name = sample["sample_id"]
            .as_str()
            .ok_or_else(|| shape("sample_id"))?
            .to_owned();
        let conv = &sample["conversation"];
        let speaker_a = conv["speaker_a"].as_str().unwrap_or_default();
        let mut sessions = Vec::new();
        for n in 1.. {
            let Some(turns) = conv[format!("session_{n}")].as_array() else {
                break;
            };
            let date = conv[format!("session_{n}_date_time")]
                .as_str()
                .unwrap_or_default();
            let start = micros(date, "%I:%M %p on %d %B, %Y").unwrap_or(0);
            let turns = turns
                .iter()
                .map(|t| {
                    let speaker = t["speaker"].as_str().unwrap_or_default();
                    let mut text = t["text"].as_str().unwrap_or_default().to_owned();
                    if let Some(c) = t["blip_caption"].as_str() {
                        text.push_str(&format!(" [shares a photo of {c}]"));
                    }
                    let role = if speaker == speaker_a {
                        Role::User
                    } else {
                        Role::Assistant
                    };
                    Turn {
                        id: t["dia_id"].as_str().map(str::to_owned),
                        ..Turn::new(role, speaker, text)
                    }
                })
                .collect();
            sessions.push(Session {
                id: format!("{name}/session_{n}"),
                start,
                turns,
            });
        }
        out.push(Conversation { name, sessions });
    }
    Ok(out)
}

/// Loads LongMemEval (oracle or S): each question's haystack sessions, with their dates.
///
/// # Errors
/// [`DatasetError`] for unreadable or misshapen files.
pub fn longmemeval(path: &Path) -> Result<Vec<Conversation>, DatasetError> {
    let shape = |what: &str| DatasetError::Shape {
        path: path.display().to_string(),
        what: what.to_owned(),
    };
    let root = read(path)?;
    let items = root
        .as_array()
        .ok_or_else(|| shape("top level is not an array"))?;
    let mut out = Vec::new();
    for item in items {
        let name = item["question_id"]
            .as_str()
            .ok_or_else(|| shape("question_id"))?
            .to_owned();
        let ids = item["haystack_session_ids"]
            .as_array()
            .ok_or_else(|| shape("haystack_session_ids"))?;
        let dates = item["haystack_dates"]
            .as_array()
            .ok_or_else(|| shape("haystack_dates"))?;
        let sessions = item["haystack_sessions"]
            .as_array()
            .ok_or_else(|| shape("haystack_sessions"))?;
        let mut conv = Vec::new();
        for ((id, date), turns) in ids.iter().zip(dates).zip(sessions) {
            let start =
                micros(date.as_str().unwrap_or_default(), "%Y/%m/%d (%a) %H:%M").unwrap_or(0);
            let turns = turns
                .as_array()
                .map(|ts| {
                    ts.iter()
                        .map(|t| {
                            let role = if t["role"] == "user" {
                                Role::User
                            } else {
                                Role::Assistant
                            };
                            let speaker = if role == Role::User {
                                "user"
                            } else {
                                "assistant"
                            };
                            Turn::new(role, speaker, t["content"].as_str().unwrap_or_default())
                        })
                        .collect()
                })
                .unwrap_or_default();
            conv.push(Session {
                id: id.as_str().unwrap_or_default().to_owned(),
                start,
                turns,
            });
        }
        out.push(Conversation {
            name,
            sessions: conv,
        });
    }
    Ok(out)
}
