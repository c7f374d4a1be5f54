//! Python callables as the memory layer's models: `embedder=fn(texts) -> vectors` and
//! `summarizer=fn(texts) -> str`, for callers who already have a model client.
//!
//! The memory layer calls them from its worker threads (and a search from the calling
//! thread); each call takes the GIL, which the `Memory` methods release while they wait.
//! An exception in the callable is a failed model call: the work stays queued and is
//! retried.

use std::fmt;

use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::summarize::{self, Summarizer, SummaryOutput, SummaryRequest};
use pyo3::prelude::*;

/// A failed Python call as a model error.
fn failed(e: PyErr) -> ModelError {
    ModelError::Backend(e.to_string().into())
}

/// The callable's `__name__` (or its type's), for stats and logs.
fn name_of(f: &Bound<'_, PyAny>) -> String {
    let name = f
        .getattr("__name__")
        .or_else(|_| f.get_type().getattr("__name__"))
        .and_then(|n| n.extract::<String>());
    format!("python:{}", name.unwrap_or_else(|_| "callable".to_owned()))
}

/// `embedder=fn(texts: list[str]) -> list[list[float]]`: one vector per text, in order, all
/// of one dimension.
pub(crate) struct PyEmbedder {
    f: Py<PyAny>,
    name: String,
}

impl PyEmbedder {
    pub(crate) fn new(f: &Bound<'_, PyAny>) -> Self {
        Self {
            f: f.clone().unbind(),
            name: name_of(f),
        }
    }
}

impl fmt::Debug for PyEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PyEmbedder")
            .field("name", &self.name)
            .finish()
    }
}

impl Embedder for PyEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        let vectors: Vec<Vec<f32>> = Python::attach(|py| {
            self.f
                .bind(py)
                .call1((texts.to_vec(),))
                .and_then(|v| v.extract())
        })
        .map_err(failed)?;
        if vectors.len() != texts.len() {
            return Err(ModelError::Malformed {
                offset: 0,
                what: format!(
                    "the embedder returned {} vectors for {} texts",
                    vectors.len(),
                    texts.len()
                ),
            });
        }
        Ok(Embeddings {
            vectors,
            usage: Usage::default(),
        })
    }
}

/// `summarizer=fn(texts: list[str]) -> str`: the summary of a tree node's children, oldest
/// first; the `[Mon YYYY - Mon YYYY | label]` header is prepended.
pub(crate) struct PySummarizer {
    f: Py<PyAny>,
    name: String,
}

impl PySummarizer {
    pub(crate) fn new(f: &Bound<'_, PyAny>) -> Self {
        Self {
            f: f.clone().unbind(),
            name: name_of(f),
        }
    }
}

impl fmt::Debug for PySummarizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PySummarizer")
            .field("name", &self.name)
            .finish()
    }
}

impl Summarizer for PySummarizer {
    fn name(&self) -> &str {
        &self.name
    }

    fn summarize(&self, request: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        let texts: Vec<String> = request.children.iter().map(|c| c.text.clone()).collect();
        let body: String =
            Python::attach(|py| self.f.bind(py).call1((texts,)).and_then(|v| v.extract()))
                .map_err(failed)?;
        Ok(SummaryOutput {
            text: format!(
                "{} {}",
                summarize::header(request.time, &request.label),
                body.trim()
            ),
            usage: Usage::default(),
        })
    }
}
