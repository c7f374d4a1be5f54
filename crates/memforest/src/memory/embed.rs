//! The [`Embedder`] trait: text to vectors for summaries (derived data) and scene scoring.

use std::fmt::Debug;

use crate::memory::model::{guarded, ModelError, Usage};

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
    /// The name of the vector space: a store records it as the maker of each user's
    /// vectors and compares it at every open and query, refusing another name
    /// ([`MemoryError::EmbedderMismatch`](crate::MemoryError::EmbedderMismatch)). Give
    /// each model, dimension and prefix its own name (`memforest_llm::OpenAiEmbedder`
    /// names `openai:<model>` with its dimension and prefixes): vectors of two spaces
    /// under one name are compared without an error, and match nothing. Also shown in
    /// statistics and logs.
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

/// [`Embedder::embed`] of `texts`, with its answer checked before anything stores or
/// scores it: one vector per text, all of one dimension above zero, every component
/// finite.
///
/// # Errors
/// The embedder's [`ModelError`]; [`ModelError::Malformed`] naming the first vector that
/// breaks a rule (the work that needed them stays queued for a retry, as after any failed
/// call).
pub fn checked(embedder: &dyn Embedder, texts: &[String]) -> Result<Embeddings, ModelError> {
    let e = guarded("embedder", || embedder.embed(texts))?;
    let bad = |what: String| ModelError::Malformed { offset: 0, what };
    if e.vectors.len() != texts.len() {
        return Err(bad(format!(
            "embedder returned {} vectors for {} texts",
            e.vectors.len(),
            texts.len()
        )));
    }
    let dim = e.vectors.first().map_or(0, Vec::len);
    for (i, v) in e.vectors.iter().enumerate() {
        if v.is_empty() || v.len() != dim {
            return Err(bad(format!(
                "embedder returned a vector of {} dimensions at {i}, the first has {dim}",
                v.len()
            )));
        }
        if let Some(j) = v.iter().position(|x| !x.is_finite()) {
            return Err(bad(format!(
                "embedder returned a non-finite component at vector {i}, dimension {j}"
            )));
        }
    }
    Ok(e)
}

/// [`Embedder::embed_query`] of `text`, checked as [`checked`] checks each vector.
///
/// # Errors
/// The embedder's [`ModelError`]; [`ModelError::Malformed`] for an empty vector or a
/// non-finite component.
pub fn checked_query(embedder: &dyn Embedder, text: &str) -> Result<Vec<f32>, ModelError> {
    let v = embedder.embed_query(text)?;
    let what = if v.is_empty() {
        "embedder returned an empty query vector".to_owned()
    } else if let Some(j) = v.iter().position(|x| !x.is_finite()) {
        format!("embedder returned a non-finite query vector component at dimension {j}")
    } else {
        return Ok(v);
    };
    Err(ModelError::Malformed { offset: 0, what })
}

#[cfg(test)]
mod tests {
    use super::{checked, checked_query, Embedder, Embeddings, ModelError};

    /// Answers every call with `vectors`.
    #[derive(Debug)]
    struct Canned(Vec<Vec<f32>>);

    impl Embedder for Canned {
        fn name(&self) -> &str {
            "canned"
        }
        fn embed(&self, _: &[String]) -> Result<Embeddings, ModelError> {
            Ok(Embeddings {
                vectors: self.0.clone(),
                ..Embeddings::default()
            })
        }
    }

    fn texts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("text {i}")).collect()
    }

    #[test]
    fn only_one_finite_vector_per_text_of_one_dimension_passes() {
        let fine = Canned(vec![vec![0.5, 1.0], vec![0.0, 0.0]]);
        assert!(checked(&fine, &texts(2)).is_ok());
        assert!(checked_query(&Canned(vec![vec![0.5, 1.0]]), "q").is_ok());
        for (vectors, says) in [
            (vec![vec![1.0, 2.0]], "1 vectors for 2 texts"),
            (vec![vec![1.0, 2.0], vec![1.0]], "1 dimensions at 1"),
            (vec![vec![], vec![]], "0 dimensions at 0"),
            (
                vec![vec![1.0, f32::NAN], vec![1.0, 2.0]],
                "vector 0, dimension 1",
            ),
            (
                vec![vec![1.0, 2.0], vec![f32::INFINITY, 2.0]],
                "vector 1, dimension 0",
            ),
        ] {
            let why = checked(&Canned(vectors), &texts(2))
                .unwrap_err()
                .to_string();
            assert!(why.contains(says), "{why}");
        }
        for (vector, says) in [(vec![], "empty"), (vec![f32::NAN], "dimension 0")] {
            let why = checked_query(&Canned(vec![vector]), "q")
                .unwrap_err()
                .to_string();
            assert!(why.contains(says), "{why}");
        }
    }
}
