//! MemForest retrieval for the CLI: [`Memory::query`] (the store's default mode: hybrid
//! with an embedder, else lexical) mapped to what `query` prints and what `eval` scores:
//! the source turns of the retrieved facts.

use memforest::recall::Query;
use memforest::{Hit, Memory};
use memforest_engine::TenantId;
use serde::Serialize;

use crate::error::Result;

/// One retrieved fact: the memory as `search` reports it (id, text, score, event time,
/// current / valid-until, sources) and the trees it was found through.
#[derive(Debug, Clone, Serialize)]
pub struct FactHit {
    /// The memory.
    #[serde(flatten)]
    pub hit: Hit,
    /// Trees (`kind:label`) it was found through.
    pub trees: Vec<String>,
}

/// What a query returned.
#[derive(Debug, Clone, Serialize)]
pub struct Recall {
    /// Facts, best first.
    pub facts: Vec<FactHit>,
    /// Source turn ids of the facts, ranked by their best fact, without repeats.
    pub turns: Vec<String>,
    /// The rendered context (facts in time order, recent turns), for an LLM prompt.
    pub context: String,
}

/// What to ask of [`query`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    /// Facts wanted.
    pub k: usize,
    /// Only current memories (no newer memory about the same thing supersedes them).
    pub latest_only: bool,
    /// Recall through the trees (`Query::trees`); false for the flat ablation.
    pub trees: bool,
}

impl Ask {
    /// `k` facts, every version, through the trees.
    #[must_use]
    pub fn top(k: usize) -> Self {
        Self {
            k,
            latest_only: false,
            trees: true,
        }
    }
}

/// Retrieves what `ask` says of `tenant`'s memories for `question` asked at `time`
/// (microseconds since the epoch; `None` = now).
///
/// # Errors
/// The engine's query errors (storage, corrupt records, an embedder mismatch).
pub fn query(
    db: &Memory,
    tenant: &TenantId,
    question: &str,
    time: Option<i64>,
    ask: Ask,
) -> Result<Recall> {
    let mut q = Query::new(question);
    q.k = ask.k.max(1);
    q.latest_only = ask.latest_only;
    q.trees = ask.trees;
    q.reference_time = time;
    let r = db.query(tenant, &q)?;
    let mut turns: Vec<String> = Vec::new();
    let mut facts = Vec::with_capacity(r.facts.len());
    let context = r.context();
    for f in r.facts {
        for t in f.provenance.iter().flat_map(|p| &p.turns) {
            if !turns.contains(t) {
                turns.push(t.clone());
            }
        }
        let trees = f.trees.clone();
        facts.push(FactHit {
            hit: Hit::from(f),
            trees,
        });
    }
    Ok(Recall {
        facts,
        turns,
        context,
    })
}
