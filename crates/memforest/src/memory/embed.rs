//! The [`Embedder`] trait: text to vectors for summaries (derived data) and scene scoring.

use std::fmt::Debug;

use crate::memory::model::{ModelError, Usage};

/// The result of one embedding call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Embeddings {
    /// One vector per input text, in input order, all of the same dimension.
    pub vectors: Vec<Vec<f32>>,
    /// Tokens spent.
    pub usage: Usage,
}

/// Embeds texts. Called from worker threads.
pub trait Embedder: Send + Sync + Debug {
    /// A short name for stats and logs.
    fn name(&self) -> &str;

    /// Embeds `texts`, stored passages (facts, summaries): one vector per text, in order.
    ///
    /// # Errors
    /// [`ModelError`]; the work that needed the vectors stays queued for a retry.
    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError>;

    /// Embeds a search query. Models trained with distinct query and passage prefixes (e5:
    /// `query: ` / `passage: `) override it; by default it is [`Embedder::embed`] of the
    /// one text.
    ///
    /// # Errors
    /// [`ModelError`], or [`ModelError::Malformed`] when no vector comes back.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, ModelError> {
        self.embed(std::slice::from_ref(&text.to_owned()))?
            .vectors
            .pop()
            .ok_or_else(|| ModelError::Malformed {
                offset: 0,
                what: "embedder returned no vector".into(),
            })
    }

    /// True when a call takes microseconds and may run on the ingesting thread (an
    /// in-process table lookup, [`crate::StaticEmbedder`]); false (the default) for a
    /// model behind a network, which ingest calls from its worker pool.
    fn runs_inline(&self) -> bool {
        false
    }

    /// The index terms related to index term `term` (a lower-cased Snowball stem, as
    /// `recall::bm25::terms` makes them), nearest first, with their cosine in the
    /// embedder's space: a hybrid or embedding query adds them to its own terms at a
    /// lower weight (`recall::expand`). None by default; [`crate::StaticEmbedder`]'s
    /// bundled model has them for its vocabulary's words.
    fn related_terms(&self, term: &str) -> &[(String, f32)] {
        let _ = term;
        &[]
    }
}

/// Cosine similarity of two vectors (0 when either is zero or the lengths differ).
#[must_use]
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}
