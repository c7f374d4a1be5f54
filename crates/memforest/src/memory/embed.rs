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

    /// Embeds `texts` (one vector per text, in order).
    ///
    /// # Errors
    /// [`ModelError`]; the caller treats embeddings as optional derived data.
    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError>;
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
