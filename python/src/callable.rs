//! Python callables as the memory layer's models: `extractor=fn(messages) -> items`,
//! `embedder=fn(texts) -> vectors` and `summarizer=fn(texts) -> str`, for callers who
//! already have a model client.
//!
//! The memory layer calls them from its worker threads (and a search from the calling
//! thread); each call takes the GIL, which the `Memory` methods release while they wait.
//! An exception in the callable is a failed model call: the work stays queued and is
//! retried.

use std::fmt;

use chrono::{DateTime, Utc};
use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::extract::{Extraction, ExtractionInput, Extractor};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::summarize::{self, Summarizer, SummaryOutput, SummaryRequest};
use pyo3::conversion::FromPyObjectOwned;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

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

/// A Python callable as the extractor (`fn(messages: list[dict]) -> list[str | dict]`: the
/// memories in an exchange's messages, each a statement or a dict of the item fields
/// `memforest_llm::items::parse_items` validates, e.g. `{"fact_text": ..., "attribute_keys":
/// [...]}`), the embedder (`fn(texts: list[str]) -> list[list[float]]`: one vector per text,
/// in order, all of one dimension) or the summarizer (`fn(texts: list[str]) -> str`: the
/// summary of a tree node's children, oldest first; the `[Mon YYYY - Mon YYYY | label]`
/// header is prepended).
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

/// The extractor's reply as the `{"items": [...]}` JSON `parse_items` reads (`None`: no
/// items): a list or tuple of statements (`str`) and item dicts.
///
/// # Errors
/// [`ModelError::Malformed`] naming what was returned instead; the `json` module's
/// errors.
fn extractor_reply(reply: &Bound<'_, PyAny>) -> PyResult<Result<Option<String>, ModelError>> {
    let py = reply.py();
    let malformed = |what: String| Ok(Err(ModelError::Malformed { offset: 0, what }));
    if !(reply.is_instance_of::<PyList>() || reply.is_instance_of::<PyTuple>()) {
        let shown: String = reply.repr()?.to_string().chars().take(80).collect();
        return malformed(format!(
            "the extractor returned a {} ({shown}), not a list of str or dict",
            reply.get_type().name()?
        ));
    }
    let items = PyList::empty(py);
    for (i, item) in reply.try_iter()?.enumerate() {
        let item = item?;
        if item.is_instance_of::<PyString>() {
            let statement = PyDict::new(py);
            statement.set_item("fact_text", item)?;
            items.append(statement)?;
        } else if item.is_instance_of::<PyDict>() {
            items.append(item)?;
        } else {
            return malformed(format!(
                "the extractor returned a list whose item {i} is a {}, not a str or dict",
                item.get_type().name()?
            ));
        }
    }
    if items.is_empty() {
        return Ok(Ok(None));
    }
    let json = PyDict::new(py);
    json.set_item("items", items)?;
    Ok(Ok(Some(
        py.import("json")?
            .call_method1("dumps", (json,))?
            .extract()?,
    )))
}

impl fmt::Debug for PyModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PyModel").field("name", &self.name).finish()
    }
}

impl Extractor for PyModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        let items = Python::attach(|py| -> PyResult<Result<Option<String>, ModelError>> {
            let messages = PyList::empty(py);
            for t in &input.turns {
                let m = PyDict::new(py);
                m.set_item("id", &t.turn_id)?;
                m.set_item("role", t.role.name())?;
                m.set_item("name", &t.speaker)?;
                m.set_item("content", &t.text)?;
                m.set_item("timestamp", DateTime::<Utc>::from_timestamp_micros(t.time))?;
                messages.append(m)?;
            }
            extractor_reply(&self.f.bind(py).call1((messages,))?)
        })
        .map_err(failed)??;
        let Some(items) = items else {
            return Ok(Extraction::default());
        };
        let turn_ids: Vec<String> = input.turns.iter().map(|t| t.turn_id.clone()).collect();
        let parsed = memforest_llm::items::parse_items(&items, &turn_ids)?;
        Ok(Extraction {
            items: parsed.items,
            usage: Usage::default(),
        })
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
