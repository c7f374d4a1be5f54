//! The flat baselines: every raw turn of a tenant is one document (`speaker: text`, as
//! stored), no facts, no trees, no time. [`Baseline`] ranks them by BM25 (the in-memory
//! [`Bm25Index`], same tokenizer and formula as MemForest's lexical retrieval);
//! [`DenseBaseline`] by the cosine of their embeddings to the question's (the store's
//! embedder, query and passage sides as it defines them).

use std::collections::HashMap;

use memforest::memory::embed::{cosine, Embedder};
use memforest::memory::MemoryError;
use memforest::recall::bm25::Bm25Index;

use crate::error::{CliError, Result};
use crate::import::TenantData;

/// An embedder failure as a CLI error.
fn model_error(what: String) -> CliError {
    CliError::Memory(MemoryError::Model(what))
}

/// Turns embedded per embedder call.
const BATCH: usize = 64;

/// The text a baseline indexes for a turn.
fn document(speaker: &str, text: &str) -> String {
    format!("{speaker}: {text}")
}

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
            index.add(i as u64, &document(&turn.speaker, &turn.text));
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

/// One tenant's turn vectors and ids.
#[derive(Debug)]
pub struct DenseBaseline {
    vectors: Vec<Vec<f32>>,
    ids: Vec<String>,
}

impl DenseBaseline {
    /// Embeds every turn of `tenant` with `embedder`, 64 turns per call.
    ///
    /// # Errors
    /// [`MemoryError::Model`] when the embedder fails or returns another number of vectors.
    pub fn build(tenant: &TenantData, embedder: &dyn Embedder) -> Result<Self> {
        let turns: Vec<_> = tenant.sessions.iter().flat_map(|s| &s.turns).collect();
        let mut vectors = Vec::with_capacity(turns.len());
        for chunk in turns.chunks(BATCH) {
            let texts: Vec<String> = chunk
                .iter()
                .map(|t| document(&t.speaker, &t.text))
                .collect();
            let e = embedder
                .embed(&texts)
                .map_err(|e| model_error(e.to_string()))?;
            if e.vectors.len() != texts.len() {
                return Err(model_error(format!(
                    "embedder returned {} vectors for {} turns",
                    e.vectors.len(),
                    texts.len()
                )));
            }
            vectors.extend(e.vectors);
        }
        let ids = turns
            .iter()
            .map(|t| t.id.clone().unwrap_or_default())
            .collect();
        Ok(Self { vectors, ids })
    }

    /// The ids of the `k` turns most similar to `query`, best first.
    ///
    /// # Errors
    /// [`MemoryError::Model`] when the embedder fails.
    pub fn search(&self, embedder: &dyn Embedder, query: &str, k: usize) -> Result<Vec<String>> {
        let q = embedder
            .embed_query(query)
            .map_err(|e| model_error(e.to_string()))?;
        let mut scored: Vec<(f32, usize)> = self
            .vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (cosine(&q, v), i))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored
            .into_iter()
            .take(k)
            .filter_map(|(_, i)| self.ids.get(i).cloned())
            .collect())
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
