//! MemForest retrieval for the CLI: [`Memory::query`] (lexical mode) mapped to what `query`
//! prints and what `eval` scores: the source turns of the retrieved facts.

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

/// Retrieves the `k` best facts of `tenant` for `question` asked at `time` (microseconds
/// since the epoch; `None` = now), only current ones with `latest_only`.
///
/// # Errors
/// The engine's query errors (storage, corrupt records).
pub fn query(
    db: &Memory,
    tenant: &TenantId,
    question: &str,
    time: Option<i64>,
    k: usize,
    latest_only: bool,
) -> Result<Recall> {
    let mut q = Query::new(question);
    q.k = k.max(1);
    q.latest_only = latest_only;
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
