//! Importers: each turns one file format into a [`Dataset`] of tenants, sessions and
//! (for benchmarks) questions with their evidence. One module per format; all of them
//! tolerate the known defects of the real files and count them in [`Warnings`], and check
//! every entry against the store's limits while reading ([`check`]), so a bad entry fails
//! naming its place before anything is stored.
//!
//! Repeats follow `Memory::ingest_session`'s semantics in every format: a tenant named again
//! is the same tenant ([`Dataset::add`]); a session id seen again is the same
//! session, and its turns are appended unless their ids are already stored (then they are
//! skipped and counted as duplicates, or reported as conflicts when their text differs).
//! Each format documents how its turn ids are made.

pub mod check;
pub mod dates;
pub mod jsonl;
pub mod locomo;
pub mod longmemeval;
pub mod turn_ids;

use std::collections::BTreeMap;
use std::path::Path;

use memforest::memory::session::Session;

use crate::error::{CliError, Result};

/// The input formats `ingest` and `eval` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// LoCoMo (`locomo10.json`): one tenant per conversation `sample_id`.
    Locomo,
    /// LongMemEval (`longmemeval_*.json`): one tenant per question instance.
    Longmemeval,
    /// One session per line, see `jsonl` module docs.
    Jsonl,
}

impl Format {
    /// The name used on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Locomo => "locomo",
            Self::Longmemeval => "longmemeval",
            Self::Jsonl => "jsonl",
        }
    }
}

/// One tenant's conversation history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantData {
    /// Tenant name (LoCoMo `sample_id`, LongMemEval `question_id`, JSONL `tenant`).
    pub name: String,
    /// Sessions in the order they should be ingested (time order where known).
    pub sessions: Vec<Session>,
}

/// A benchmark question with its evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The tenant whose history answers it.
    pub tenant: String,
    /// The question text.
    pub text: String,
    /// Category label (LoCoMo: `multi-hop`, `temporal`, ...; LongMemEval: `question_type`).
    pub category: String,
    /// The gold answer as text (numbers rendered as text; empty when absent).
    pub answer: String,
    /// Ids of the evidence turns that exist in the history.
    pub evidence_turns: Vec<String>,
    /// Ids of the evidence sessions (LongMemEval `answer_session_ids`; empty for LoCoMo).
    pub evidence_sessions: Vec<String>,
    /// When it is asked, microseconds since the Unix epoch, when known.
    pub time: Option<i64>,
}

/// Counts of tolerated defects, by kind (e.g. `evidence id matches no turn`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Warnings(pub BTreeMap<&'static str, u64>);

impl Warnings {
    /// Counts one defect of `kind`.
    pub fn add(&mut self, kind: &'static str) {
        *self.0.entry(kind).or_default() += 1;
    }

    /// Total defects.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// The count of `kind`.
    #[must_use]
    pub fn get(&self, kind: &str) -> u64 {
        self.0.get(kind).copied().unwrap_or(0)
    }
}

/// Everything an importer read.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// Tenants with their sessions.
    pub tenants: Vec<TenantData>,
    /// Questions (empty for JSONL).
    pub questions: Vec<Question>,
    /// Tolerated defects.
    pub warnings: Warnings,
}

impl Dataset {
    /// Appends `sessions` to the tenant named `name`, adding the tenant when the file names
    /// it for the first time; true when it was named before.
    pub fn add(&mut self, name: &str, sessions: Vec<Session>) -> bool {
        match self.tenants.iter_mut().find(|t| t.name == name) {
            Some(t) => {
                t.sessions.extend(sessions);
                true
            }
            None => {
                self.tenants.push(TenantData {
                    name: name.to_owned(),
                    sessions,
                });
                false
            }
        }
    }

    /// The start of the last session added for tenant `name`, if any.
    #[must_use]
    pub fn last_start(&self, name: &str) -> Option<i64> {
        self.tenants
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.sessions.last())
            .map(|s| s.start)
    }

    /// Total turns over every tenant.
    #[must_use]
    pub fn turn_count(&self) -> usize {
        self.tenants
            .iter()
            .flat_map(|t| &t.sessions)
            .map(|s| s.turns.len())
            .sum()
    }

    /// Keeps the first `n` tenants and their questions.
    pub fn truncate(&mut self, n: usize) {
        self.tenants.truncate(n);
        let keep: std::collections::HashSet<&str> =
            self.tenants.iter().map(|t| t.name.as_str()).collect();
        self.questions.retain(|q| keep.contains(q.tenant.as_str()));
    }
}

/// Reads `path` as `format`. A `.zst` file is decompressed first.
///
/// # Errors
/// [`CliError::Io`] for an unreadable file; [`CliError::Json`] with line and column;
/// [`CliError::Format`] when the JSON is not the declared format.
pub fn load(format: Format, path: &Path) -> Result<Dataset> {
    let bytes = std::fs::read(path).map_err(CliError::io("read", path))?;
    let bytes = if path.extension().is_some_and(|e| e == "zst") {
        zstd::stream::decode_all(bytes.as_slice()).map_err(CliError::io("decompress", path))?
    } else {
        bytes
    };
    parse(format, path, &bytes)
}

/// Parses `bytes` (the contents of `path`) as `format`.
///
/// # Errors
/// As [`load`].
pub fn parse(format: Format, path: &Path, bytes: &[u8]) -> Result<Dataset> {
    match format {
        Format::Locomo => locomo::parse(path, &parse_json(path, bytes)?),
        Format::Longmemeval => longmemeval::parse(path, &parse_json(path, bytes)?),
        Format::Jsonl => jsonl::parse(path, bytes),
    }
}

fn parse_json(path: &Path, bytes: &[u8]) -> Result<serde_json::Value> {
    serde_json::from_slice(bytes).map_err(|e| CliError::json(path, 0, &e))
}

/// A JSON value as question/answer text: strings as they are, numbers and booleans
/// rendered, anything else empty (counted by the caller).
#[must_use]
pub fn text_of(v: Option<&serde_json::Value>) -> Option<String> {
    match v? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
