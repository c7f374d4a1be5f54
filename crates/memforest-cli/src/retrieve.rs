//! MemForest retrieval for the CLI: [`Memory::query`] (lexical mode) mapped to what `query`
//! prints and what `eval` scores: the source turns of the retrieved facts.

use memforest::recall::Query;
use memforest::Memory;
use memforest_engine::TenantId;
use serde::Serialize;

use crate::error::Result;

/// One retrieved fact.
#[derive(Debug, Clone, Serialize)]
pub struct FactHit {
    /// Fact id (printed as 16 hex digits it is the memory id `get` and `forget --memory` take).
    pub id: u64,
    /// Fact text.
    pub text: String,
    /// Ranking score (`RecalledFact::score`: its best source turn's fused score).
    pub score: f32,
    /// Source turn ids, first occurrence first.
    pub turns: Vec<String>,
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
/// since the epoch; `None` = now).
///
/// # Errors
/// The engine's query errors (storage, corrupt records).
pub fn query(
    db: &Memory,
    tenant: &TenantId,
    question: &str,
    time: Option<i64>,
    k: usize,
) -> Result<Recall> {
    let mut q = Query::new(question);
    q.k = k.max(1);
    q.reference_time = time;
    let r = db.query(tenant, &q)?;
    let mut turns: Vec<String> = Vec::new();
    let mut facts = Vec::with_capacity(r.facts.len());
    for f in &r.facts {
        let ids: Vec<String> = f
            .provenance
            .iter()
            .flat_map(|p| p.turns.iter().cloned())
            .collect();
        for t in &ids {
            if !turns.contains(t) {
                turns.push(t.clone());
            }
        }
        facts.push(FactHit {
            id: f.id,
            text: f.text.clone(),
            score: f.score,
            turns: ids,
            trees: f.trees.clone(),
        });
    }
    Ok(Recall {
        facts,
        turns,
        context: r.context(),
    })
}
