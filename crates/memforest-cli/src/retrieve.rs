//! MemForest retrieval for the CLI: `Db::query` (the read path) mapped to what `query`
//! prints and what `eval` scores (the source turns of the retrieved facts, best first).

use memforest_engine::{Db, TenantId};
use serde::Serialize;

use crate::error::{CliError, Result};

/// One retrieved fact.
#[derive(Debug, Clone, Serialize)]
pub struct FactHit {
    /// Fact text.
    pub text: String,
    /// Relevance score (higher is better).
    pub score: f64,
    /// Source turn ids.
    pub turns: Vec<String>,
}

/// What a query returned.
#[derive(Debug, Clone, Serialize)]
pub struct Recall {
    /// Facts, best first.
    pub facts: Vec<FactHit>,
    /// Source turn ids of the facts, best first, without repeats.
    pub turns: Vec<String>,
    /// The rendered context (summaries and facts in time order), for an LLM prompt.
    pub context: String,
}

/// Retrieves the `k` best facts of `tenant` for `question`, asked at `time`
/// (microseconds; `None` = now).
///
/// # Errors
/// [`CliError::NotAvailable`] until the engine's read path (`Db::query`) lands.
pub fn query(
    _db: &Db,
    _tenant: &TenantId,
    _question: &str,
    _time: Option<i64>,
    _k: usize,
) -> Result<Recall> {
    Err(CliError::NotAvailable(
        "MemForest retrieval (Db::query, the engine's read path) is not in memforest-engine yet",
    ))
}
