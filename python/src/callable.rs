//! Python callables as the memory layer's models: `extractor=fn(messages) -> items`,
//! `embedder=fn(texts) -> vectors` and `summarizer=fn(texts) -> str`, for callers who
//! already have a model client.
//!
//! The memory layer calls them from its worker threads (and a search from the calling
//! thread); each call takes the GIL, which the `Memory` methods release while they wait.
//! An exception in the callable is a failed model call: the work stays queued and is
//! retried. [`Failures`] keeps the last failure of each model, which `Memory.flush` names
//! (the memory layer keeps only counts), and a `KeyboardInterrupt` or `SystemExit` raised
//! in a callable, which the `Memory` call that waits on it raises again.

use std::fmt;
use std::sync::Arc;
use std::thread::{self, ThreadId};

use chrono::{DateTime, Utc};
use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::extract::{Extraction, ExtractionInput, Extractor};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::summarize::{self, Summarizer, SummaryOutput, SummaryRequest};
use parking_lot::Mutex;
use pyo3::conversion::FromPyObjectOwned;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

/// The model a [`PyModel`] serves as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `extractor=`.
    Extractor,
    /// `summarizer=`.
    Summarizer,
    /// `embedder=`.
    Embedder,
}

impl Role {
    const ALL: [Self; 3] = [Self::Extractor, Self::Summarizer, Self::Embedder];

    fn name(self) -> &'static str {
        match self {
            Self::Extractor => "extractor",
            Self::Summarizer => "summarizer",
            Self::Embedder => "embedder",
        }
    }

    fn index(self) -> usize {
        match self {
            Self::Extractor => 0,
            Self::Summarizer => 1,
            Self::Embedder => 2,
        }
    }
}

/// The most interrupts [`Failures`] holds; older ones are dropped.
const MAX_INTERRUPTS: usize = 16;

/// What the failed calls of one `Memory`'s Python models left behind.
#[derive(Debug, Default)]
pub(crate) struct Failures {
    /// The last failure of each [`Role`] (by [`Role::index`]), as its message.
    last: Mutex<[Option<String>; 3]>,
    /// `KeyboardInterrupt`, `SystemExit` (any exception that is not an `Exception`) raised
    /// in a callable, with the thread that called it, oldest first.
    interrupts: Mutex<Vec<(ThreadId, PyErr)>>,
}

impl Failures {
    fn record(&self, role: Role, message: String) {
        if let Some(slot) = self.last.lock().get_mut(role.index()) {
            *slot = Some(message);
        }
    }

    fn interrupted(&self, e: PyErr) {
        let mut interrupts = self.interrupts.lock();
        if interrupts.len() >= MAX_INTERRUPTS {
            interrupts.remove(0);
        }
        interrupts.push((thread::current().id(), e));
    }

    /// The last interrupt raised in a callable called by this thread (`here`), or by any
    /// thread; the rest of them (of that thread) are dropped.
    pub(crate) fn take_interrupt(&self, here: bool) -> Option<PyErr> {
        let me = thread::current().id();
        let mut interrupts = self.interrupts.lock();
        let (taken, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut *interrupts)
            .into_iter()
            .partition(|(t, _)| !here || *t == me);
        *interrupts = kept;
        taken.into_iter().last().map(|(_, e)| e)
    }

    /// The last failure of each model that failed, as `"; the last extractor failure:
    /// RuntimeError: ..."` (empty when none did).
    pub(crate) fn describe(&self) -> String {
        let last = self.last.lock();
        Role::ALL
            .iter()
            .filter_map(|r| {
                let message = last.get(r.index())?.as_ref()?;
                Some(format!("; the last {} failure: {message}", r.name()))
            })
            .collect()
    }
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
    role: Role,
    failures: Arc<Failures>,
}

impl PyModel {
    /// Callable `f` as the `role` model, its failures kept in `failures`.
    pub(crate) fn new(f: &Bound<'_, PyAny>, role: Role, failures: &Arc<Failures>) -> Self {
        Self {
            f: f.clone().unbind(),
            name: name_of(f),
            role,
            failures: Arc::clone(failures),
        }
    }

    /// Calls the callable with `texts` and extracts its result as `T`.
    fn call<T: for<'py> FromPyObjectOwned<'py>>(
        &self,
        texts: Vec<String>,
    ) -> Result<T, ModelError> {
        let _inside = Inside::enter();
        Python::attach(|py| {
            self.f
                .bind(py)
                .call1((texts,))
                .and_then(|v| v.extract().map_err(Into::into))
        })
        .map_err(|e| self.py_failed(e))
    }

    /// A failed Python call as a model error, its `"Type: message"` recorded as the last
    /// failure of this model; an interrupt (`KeyboardInterrupt`, `SystemExit`) is also
    /// kept to be raised again.
    fn py_failed(&self, e: PyErr) -> ModelError {
        let interrupt = Python::attach(|py| !e.is_instance_of::<PyException>(py));
        let message = e.to_string();
        self.failures.record(self.role, message.clone());
        if interrupt {
            self.failures.interrupted(e);
        }
        ModelError::Backend(message.into())
    }

    /// `e`, recorded as the last failure of this model.
    fn failed(&self, e: ModelError) -> ModelError {
        self.failures.record(self.role, e.to_string());
        e
    }
}

thread_local! {
    /// How many model callables this thread is running (nested when a callable searches).
    static INSIDE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Marks this thread as running a model callable while it lives.
struct Inside;

impl Inside {
    fn enter() -> Self {
        INSIDE.with(|n| n.set(n.get().saturating_add(1)));
        Self
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// True on a thread that is running a model callable: `Memory.close` there would wait for
/// the call it is part of.
pub(crate) fn inside_a_model() -> bool {
    INSIDE.with(|n| n.get() > 0)
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
        let inside = Inside::enter();
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
        .map_err(|e| self.py_failed(e))?
        .map_err(|e| self.failed(e))?;
        drop(inside);
        let Some(items) = items else {
            return Ok(Extraction::default());
        };
        let turn_ids: Vec<String> = input.turns.iter().map(|t| t.turn_id.clone()).collect();
        let parsed = memforest_llm::items::parse_items(&items, &turn_ids)
            .map_err(|e| self.failed(ModelError::from(e)))?;
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
            return Err(self.failed(ModelError::Malformed {
                offset: 0,
                what: format!(
                    "the embedder returned {} vectors for {} texts",
                    vectors.len(),
                    texts.len()
                ),
            }));
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
