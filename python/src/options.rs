//! The keyword options of `Memory(path, ...)`: which extractor, summarizer and embedder,
//! where an OpenAI-compatible server is, durability and pools.

use std::sync::Arc;

use memforest::memory::options::MAX_POOL;
use memforest::memory::summarize::HeaderOnlySummarizer;
use memforest::{MemoryOptions, Options};
use memforest_engine::Durability;
use memforest_llm::{LlmConfig, OpenAiEmbedder, OpenAiExtractor, OpenAiSummarizer};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::callable::{Failures, PyModel, Role};
use crate::error::Kind;

/// The options as given to `Memory(...)`.
pub(crate) struct PyOptions<'py> {
    /// `"heuristic"` (default), `"openai"` or a callable.
    pub extractor: Option<Bound<'py, PyAny>>,
    /// `"extractive"` (default), `"openai"`, `"none"` (header only) or a callable.
    pub summarizer: Option<Bound<'py, PyAny>>,
    /// `"static"` (default), `"openai"`, `"none"` (lexical search) or a callable.
    pub embedder: Option<Bound<'py, PyAny>>,
    /// Base URL of the OpenAI-compatible server.
    pub llm_url: Option<String>,
    /// Chat model of the `"openai"` extractor and summarizer.
    pub llm_model: Option<String>,
    /// Embedding model of the `"openai"` embedder.
    pub embed_model: Option<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// `"buffered"` (`None`: the default), `"sync_data"` or `"sync_all"`.
    pub durability: Option<String>,
    /// Worker threads of the extraction pool and of the summary pool (each); `None` keeps
    /// the default.
    pub pool: Option<usize>,
    /// Waiting cells of one user extracted in one model call; `None` keeps the default.
    pub extract_batch: Option<usize>,
    /// Dirty tree nodes of one user summarized in one model call; `None` keeps the default.
    pub summary_batch: Option<usize>,
    /// Where the Python models keep their failures.
    pub failures: Arc<Failures>,
}

/// What a model option names: `None` (not given) is the default, `"none"` none at all.
enum Choice<'a, 'py> {
    Default,
    Named(String),
    Callable(&'a Bound<'py, PyAny>),
    Off,
}

fn choice<'a, 'py>(v: Option<&'a Bound<'py, PyAny>>, what: &str) -> PyResult<Choice<'a, 'py>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(Choice::Default);
    };
    if let Ok(s) = v.extract::<String>() {
        Ok(if s == "none" {
            Choice::Off
        } else {
            Choice::Named(s)
        })
    } else if v.is_callable() {
        Ok(Choice::Callable(v))
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be a str or a callable, not {}",
            v.get_type().name()?
        )))
    }
}

fn unknown(what: &str, name: &str, allowed: &str) -> PyErr {
    PyValueError::new_err(format!("{what} must be one of {allowed}, not {name:?}"))
}

impl PyOptions<'_> {
    /// The Rust options.
    ///
    /// # Errors
    /// `TypeError`/`ValueError` for a bad option; `InvalidInputError` for a pool or batch
    /// of 0, a pool over `MAX_POOL` (1024), an `"openai"` model without `llm_url` or its model name, or a client that
    /// cannot be built.
    pub(crate) fn build(&self) -> PyResult<Options> {
        for (name, value) in [
            ("pool", self.pool),
            ("extract_batch", self.extract_batch),
            ("summary_batch", self.summary_batch),
        ] {
            if value == Some(0) {
                return Err(Kind::InvalidInput.err(format!("{name} must be at least 1")));
            }
        }
        if let Some(pool) = self.pool.filter(|&p| p > MAX_POOL) {
            return Err(Kind::InvalidInput.err(format!(
                "pool may have at most {MAX_POOL} workers, got {pool}"
            )));
        }
        let mut o = Options::default();
        let m = &mut o.memory;
        if let Some(pool) = self.pool {
            m.extract_pool = pool;
            m.summary_pool = pool;
        }
        m.extract_batch = self.extract_batch.unwrap_or(m.extract_batch);
        m.summary_batch = self.summary_batch.unwrap_or(m.summary_batch);
        m.durability = match self.durability.as_deref().unwrap_or("buffered") {
            "buffered" => Durability::Buffered,
            "sync_data" => Durability::SyncData,
            "sync_all" => Durability::SyncAll,
            other => {
                return Err(unknown(
                    "durability",
                    other,
                    "\"buffered\", \"sync_data\", \"sync_all\"",
                ))
            }
        };
        self.extractor(m)?;
        self.summarizer(m)?;
        self.embedder(m)?;
        Ok(o)
    }

    fn extractor(&self, m: &mut MemoryOptions) -> PyResult<()> {
        match choice(self.extractor.as_ref(), "extractor")? {
            Choice::Default => Ok(()),
            Choice::Named(n) if n == "heuristic" => Ok(()),
            Choice::Named(n) if n == "openai" => {
                let c = self.llm(self.llm_model.as_ref(), "extractor=\"openai\"", "llm_model")?;
                m.extractor = Arc::new(OpenAiExtractor::new(c).map_err(model)?);
                Ok(())
            }
            Choice::Named(n) => Err(unknown(
                "extractor",
                &n,
                "\"heuristic\", \"openai\", a callable",
            )),
            Choice::Callable(f) => {
                m.extractor = Arc::new(PyModel::new(f, Role::Extractor, &self.failures));
                Ok(())
            }
            Choice::Off => Err(PyValueError::new_err(
                "extractor must be \"heuristic\", \"openai\" or a callable",
            )),
        }
    }

    fn summarizer(&self, m: &mut MemoryOptions) -> PyResult<()> {
        match choice(self.summarizer.as_ref(), "summarizer")? {
            Choice::Default => {}
            Choice::Named(n) if n == "extractive" => {}
            Choice::Named(n) if n == "openai" => {
                let c = self.llm(
                    self.llm_model.as_ref(),
                    "summarizer=\"openai\"",
                    "llm_model",
                )?;
                m.summarizer = Arc::new(OpenAiSummarizer::new(c).map_err(model)?);
            }
            Choice::Named(n) => {
                return Err(unknown(
                    "summarizer",
                    &n,
                    "\"extractive\", \"openai\", \"none\", a callable",
                ))
            }
            Choice::Callable(f) => {
                m.summarizer = Arc::new(PyModel::new(f, Role::Summarizer, &self.failures));
            }
            Choice::Off => m.summarizer = Arc::new(HeaderOnlySummarizer),
        }
        Ok(())
    }

    fn embedder(&self, m: &mut MemoryOptions) -> PyResult<()> {
        match choice(self.embedder.as_ref(), "embedder")? {
            Choice::Default => {}
            Choice::Named(n) if n == "static" => {}
            Choice::Named(n) if n == "openai" => {
                let c = self.llm(
                    self.embed_model.as_ref(),
                    "embedder=\"openai\"",
                    "embed_model",
                )?;
                m.embedder = Some(Arc::new(OpenAiEmbedder::new(c).map_err(model)?));
            }
            Choice::Named(n) => {
                return Err(unknown(
                    "embedder",
                    &n,
                    "\"static\", \"openai\", \"none\", a callable",
                ))
            }
            Choice::Callable(f) => {
                m.embedder = Some(Arc::new(PyModel::new(f, Role::Embedder, &self.failures)));
            }
            Choice::Off => m.embedder = None,
        }
        Ok(())
    }

    /// The client settings of an `"openai"` model named by the `flag` option.
    fn llm(&self, model: Option<&String>, what: &str, flag: &str) -> PyResult<LlmConfig> {
        let (Some(url), Some(model)) = (&self.llm_url, model) else {
            return Err(Kind::InvalidInput.err(format!("{what} needs llm_url and {flag}")));
        };
        let mut c = LlmConfig::new(url.clone(), model.clone());
        if let Some(var) = &self.api_key_env {
            c = c.with_api_key_env(var.clone());
        }
        Ok(c)
    }
}

/// A model client that cannot be built.
fn model(e: memforest_llm::LlmError) -> PyErr {
    Kind::InvalidInput.err(e.to_string())
}
