//! The [`Extractor`] trait: one call per MemCell turns raw turns into memory items with
//! the MemForest paper's item fields ("Extraction").

mod acknowledgement;
pub mod dates;
mod heuristic;
pub mod statements;

pub use heuristic::HeuristicExtractor;

use std::fmt::Debug;

use serde::{Deserialize, Serialize};

use crate::memory::model::{ModelError, Usage};
use crate::memory::session::Role;

/// Whose statement a fact comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Origin {
    /// Said by the user.
    User,
    /// Said by the assistant.
    Assistant,
    /// Both contributed.
    Mixed,
    /// Not known.
    Unknown,
}

impl Origin {
    /// The origin of a statement made by a speaker with `role`.
    #[must_use]
    pub fn from_role(role: Role) -> Self {
        match role {
            Role::User => Self::User,
            Role::Assistant => Self::Assistant,
            Role::System => Self::Unknown,
        }
    }
}

/// What kind of statement a fact is (the paper's `semantic_role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SemanticRole {
    /// Something that happened.
    Event,
    /// Something that holds (until changed).
    State,
    /// A like or dislike.
    Preference,
    /// A rule or limit.
    Constraint,
    /// An intention.
    Plan,
    /// A detail of something else.
    Detail,
    /// A pointer to a source (a title, a link).
    Reference,
}

/// One turn of a cell, as handed to an extractor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellTurn {
    /// The turn id.
    pub turn_id: String,
    /// The speaker's role.
    pub role: Role,
    /// The speaker's name (may be empty).
    pub speaker: String,
    /// The text.
    pub text: String,
    /// When it was said, microseconds since the Unix epoch (resolved: never missing).
    pub time: i64,
}

/// The input of one extraction call: one MemCell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractionInput {
    /// The session id.
    pub session_id: String,
    /// The session start, microseconds since the Unix epoch.
    pub session_start: i64,
    /// The cell's turns in order (1..=b of them).
    pub turns: Vec<CellTurn>,
}

/// One memory item (the paper's extraction output fields).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExtractedItem {
    /// Self-contained third-person statement, dates and amounts embedded.
    pub fact_text: String,
    /// Names of the people involved.
    pub participants: Vec<String>,
    /// Whose statement it is.
    pub origin: Option<Origin>,
    /// What kind of statement it is.
    pub semantic_role: Option<SemanticRole>,
    /// Entities mentioned (proper names, titles, amounts with units).
    pub entities: Vec<String>,
    /// Topic keywords (at most 3).
    pub topics: Vec<String>,
    /// The time expression as written ("last week"), if any.
    pub time_text: Option<String>,
    /// Start of the time the fact is about, microseconds since the Unix epoch; `None`
    /// inherits the cell's span.
    pub time_start: Option<i64>,
    /// End of that time (inclusive), microseconds since the Unix epoch.
    pub time_end: Option<i64>,
    /// Attribute keys (e.g. `pet.name`), at most 2.
    pub attribute_keys: Vec<String>,
    /// Domain keys (e.g. `health`), at most 2.
    pub domain_keys: Vec<String>,
    /// Collection keys (e.g. `books read`), at most 2.
    pub collection_keys: Vec<String>,
    /// Turn ids the item comes from; empty means every turn of the cell.
    pub source_turns: Vec<String>,
}

/// The result of one extraction call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extraction {
    /// The items, in the order the model gave them.
    pub items: Vec<ExtractedItem>,
    /// Tokens spent.
    pub usage: Usage,
}

/// The result of one [`Extractor::extract_batch`] call.
#[derive(Debug, Default)]
pub struct BatchExtraction {
    /// Per input, in the inputs' order: its items, or why the reply had none usable for
    /// it (that cell alone stays pending and is retried).
    pub cells: Vec<Result<Vec<ExtractedItem>, ModelError>>,
    /// Tokens spent by the call.
    pub usage: Usage,
}

/// Turns one MemCell into memory items. Implementations must be deterministic for a crash
/// replay to find the same facts (an LLM at temperature 0 is close enough: exact
/// normalized-text dedup absorbs a repeat). Called from worker threads.
pub trait Extractor: Send + Sync + Debug {
    /// A short name for stats and logs (e.g. `heuristic`, `openai:gpt-4o-mini`).
    fn name(&self) -> &str;

    /// Extracts the items of one cell.
    ///
    /// # Errors
    /// [`ModelError`]: the cell is kept and retried later; never a panic.
    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError>;

    /// Most cells [`Extractor::extract_batch`] takes in one call. Default 1: the
    /// extractor has no batched call, and cells are extracted one at a time.
    fn max_batch(&self) -> usize {
        1
    }

    /// Extracts the items of several cells (at most [`Extractor::max_batch`]) in one model
    /// call, for the background extraction of cells of one user waiting together. The
    /// result holds one entry per input, in order; an input the reply leaves out or
    /// answers with nothing usable is an `Err` entry, never a lost cell. The default makes
    /// one [`Extractor::extract`] call per input and sums their usage.
    ///
    /// # Errors
    /// [`ModelError`] when the call as a whole failed: every cell is kept and retried.
    fn extract_batch(&self, inputs: &[ExtractionInput]) -> Result<BatchExtraction, ModelError> {
        let mut out = BatchExtraction::default();
        for input in inputs {
            let cell = match self.extract(input) {
                Ok(x) => {
                    out.usage.prompt_tokens += x.usage.prompt_tokens;
                    out.usage.completion_tokens += x.usage.completion_tokens;
                    out.usage.reported |= x.usage.reported;
                    Ok(x.items)
                }
                Err(e) => Err(e),
            };
            out.cells.push(cell);
        }
        Ok(out)
    }

    /// True when a call is local CPU work of microseconds (no network, no sleep, no lock
    /// held for long): when the embedder runs inline too (or none is set), `Memory::ingest_session` then extracts on the
    /// calling thread instead of handing each cell to the extraction pool, whose hand-off
    /// (a channel send and a worker's wake-up, which waits for a CPU on a busy machine)
    /// costs more than such a call. A session's cells are then extracted one after
    /// another; parallelism comes from concurrent ingest callers. Default false: calls go
    /// to the pool, `MemoryOptions::extract_pool` at once.
    fn runs_inline(&self) -> bool {
        false
    }

    /// True when a call is local CPU work: no model, no network, nothing to wait for. Then
    /// `Memory::add` always extracts before it returns and lists the memories; otherwise
    /// it leaves the extraction to the background pool unless `AddOptions::wait`. Default
    /// false (an extractor is taken to call a model).
    fn is_local(&self) -> bool {
        false
    }
}
