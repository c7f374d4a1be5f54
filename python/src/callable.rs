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
use pyo3::conversion::FromPyObjectOwned;
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

/// A Python callable as the embedder (`fn(texts: list[str]) -> list[list[float]]`: one
/// vector per text, in order, all of one dimension) or the summarizer (`fn(texts:
/// list[str]) -> str`: the summary of a tree node's children, oldest first; the
/// `[Mon YYYY - Mon YYYY | label]` header is prepended).
pub(crate) struct PyModel {
    f: Py<PyAny>,
    name: String,
}

impl PyModel {
    pub(crate) fn new(f: &Bound<'_, PyAny>) -> Self {
        Self {
            f: f.clone().unbind(),
            name: name_of(f),
        }
    }

    /// Calls the callable with `texts` and extracts its result as `T`.
    fn call<T: for<'py> FromPyObjectOwned<'py>>(
        &self,
        texts: Vec<String>,
    ) -> Result<T, ModelError> {
        Python::attach(|py| {
            self.f
                .bind(py)
                .call1((texts,))
                .and_then(|v| v.extract().map_err(Into::into))
        })
        .map_err(failed)
    }
}

impl fmt::Debug for PyModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PyModel").field("name", &self.name).finish()
    }
}

impl Embedder for PyModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        let vectors: Vec<Vec<f32>> = self.call(texts.to_vec())?;
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

impl Summarizer for PyModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn summarize(&self, request: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        let texts = request.children.iter().map(|c| c.text.clone()).collect();
        let body: String = self.call(texts)?;
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
