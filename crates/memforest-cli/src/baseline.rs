//! The flat BM25 baseline: every raw turn of a tenant is one document (the engine's
//! in-memory [`Bm25Index`], same tokenizer and formula as MemForest's lexical retrieval),
//! no facts, no trees, no time.

use std::collections::HashMap;

use memforest::recall::bm25::Bm25Index;

use crate::import::TenantData;

/// One tenant's flat index and its turn ids (document id = position).
#[derive(Debug)]
pub struct Baseline {
    index: Bm25Index,
    ids: Vec<String>,
}

impl Baseline {
    /// Indexes every turn of `tenant` (text prefixed with the speaker name, as stored).
    #[must_use]
    pub fn build(tenant: &TenantData) -> Self {
        let mut index = Bm25Index::default();
        let mut ids = Vec::new();
        for (i, turn) in tenant.sessions.iter().flat_map(|s| &s.turns).enumerate() {
            let text = format!("{}: {}", turn.speaker, turn.text);
            index.add(i as u64, &text);
            ids.push(turn.id.clone().unwrap_or_default());
        }
        Self { index, ids }
    }

    /// The ids of the `k` best turns for `query`, best first.
    #[must_use]
    pub fn search(&self, query: &str, k: usize) -> Vec<String> {
        self.index
            .search(query, k)
            .into_iter()
            .filter_map(|(i, _)| {
                usize::try_from(i)
                    .ok()
                    .and_then(|i| self.ids.get(i))
                    .cloned()
            })
            .collect()
    }
}

/// Turn id -> session id over every tenant's turns.
#[must_use]
pub fn session_of(tenant: &TenantData) -> HashMap<String, String> {
    tenant
        .sessions
        .iter()
        .flat_map(|s| {
            s.turns
                .iter()
                .filter_map(move |t| t.id.clone().map(|id| (id, s.id.clone())))
        })
        .collect()
}
