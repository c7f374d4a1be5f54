//! `memforest.Memory`: the Python class over [`memforest::Memory`].

use std::collections::BTreeMap;
use std::sync::Arc;

use memforest::{AddOptions, ListOptions, MemoryError, MemoryId, Options, SearchOptions};
use parking_lot::RwLock;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use serde::Serialize;

use crate::callable::Failures;
use crate::convert::{self, int_arg, opt_time, IntArg};
use crate::error::{self, Kind};
use crate::fork;
use crate::messages;
use crate::options::PyOptions;

/// The session an `add` without `session_id` or `run_id` goes to.
const DEFAULT_SESSION: &str = "default";

/// How long `flush()` waits before it looks for a pending signal (Ctrl-C) again.
const SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(100);

/// Why a call on the store did not run.
enum Failure {
    /// The store's error.
    Memory(MemoryError),
    /// The `Memory` is closed.
    Closed,
    /// A Python exception (e.g. the `ClosedError` of a forked child).
    Python(PyErr),
}

impl From<MemoryError> for Failure {
    fn from(e: MemoryError) -> Self {
        Self::Memory(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Memory(e) => error::to_py(e),
            Failure::Closed => Kind::Closed.err("this Memory is closed"),
            Failure::Python(e) => e,
        }
    }
}

/// A MemForest memory store: durable long-term memory for AI agents.
///
/// ``Memory(path)`` opens (or creates) the store in directory ``path`` with the defaults,
/// which need no network: the heuristic extractor, the extractive summarizer and the
/// bundled static embedder. One process at a time opens a store (``LockedError``
/// otherwise); share one ``Memory`` between threads. Use it as a context manager, or call
/// ``close()``: closing makes everything durable and stops the background work.
///
/// Keyword options:
///
/// * ``extractor``: ``"heuristic"`` (default), ``"openai"``, or a callable
///   ``fn(messages: list[dict]) -> list[str | dict]`` returning the memories in an
///   exchange's messages (each dict has ``id``, ``role``, ``name``, ``content``,
///   ``timestamp``): a list (or tuple) of statements, or dicts of item fields
///   (``fact_text``, ``entities``, ``attribute_keys``, ``time_start``, ...). Any other
///   reply (a ``str`` included) is a failed call, as an exception in the callable is: the
///   work stays queued and is retried, and ``flush()`` names the last failure. A
///   ``KeyboardInterrupt`` or ``SystemExit`` in a callable is raised again by the call
///   that ran it on its own thread, else by ``flush()`` (background work, the model calls
///   ``add(wait=True)`` waits for included).
/// * ``summarizer``: ``"extractive"`` (default), ``"openai"``, ``"none"`` (headers only), or
///   a callable ``fn(texts: list[str]) -> str`` summarizing a tree node's children.
/// * ``embedder``: ``"static"`` (default), ``"openai"``, ``"none"`` (lexical search only),
///   or a callable ``fn(texts: list[str]) -> list[list[float]]``.
/// * ``llm_url``, ``llm_model``, ``embed_model``, ``api_key_env``: the OpenAI-compatible
///   server (e.g. ``"http://127.0.0.1:8000/v1"``), its chat model, its embedding model, and
///   the environment variable holding the API key.
/// * ``durability``: ``"buffered"`` (default: survives a process crash), ``"sync_data"`` or
///   ``"sync_all"`` (survive a power loss).
/// * ``pool``: worker threads of the extraction and of the summary pool (each).
/// * ``extract_batch``: waiting exchanges of one user extracted in one model call (default
///   8; 1: each on its own). ``summary_batch``: tree nodes of one user summarized in one
///   call (default 8). Larger batches mean fewer model calls when adds arrive faster than
///   the model answers.
/// * ``read_only``: open without the lock; every change raises.
///
/// Memories belong to a user (``user_id``): no call reads or changes another user's.
/// Results are plain dicts and lists (times as timezone-aware ``datetime`` in UTC; an aware
/// ``datetime`` argument, of any ``tzinfo``, is converted to UTC, a naive one is read as
/// UTC); memory ids are strings of 16 hex digits. Every call that does I/O releases the
/// GIL. ``AsyncMemory`` has the same methods as coroutines.
///
/// A ``Memory`` belongs to the process that opened it: in a forked child it reads as
/// closed and every call raises ``ClosedError``. Its background threads cannot be carried
/// over a fork, so a child forked while one was open cannot open stores either
/// (``MemForestError``): open them after forking (in each worker), close the parent's
/// first, or use multiprocessing's ``"spawn"`` or ``"forkserver"`` start method.
#[pyclass(module = "memforest", name = "Memory", frozen)]
pub(crate) struct Memory {
    inner: RwLock<Option<memforest::Memory>>,
    /// The process that opened it.
    pid: u32,
    path: String,
    /// What its Python models' failed calls left (`Memory.flush` names the last ones).
    failures: Arc<Failures>,
}

/// `limit` of a search or context, checked: 1..=[`memforest::MAX_K`].
fn search_limit(limit: &IntArg<'_>) -> PyResult<usize> {
    limit.get("limit", 1, memforest::MAX_K)
}

/// An optional integer option of `Memory(...)`, at least 1.
fn positive(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<usize>> {
    value
        .filter(|v| !v.is_none())
        .map(|v| int_arg(v, name, 1, usize::MAX))
        .transpose()
}

/// The scope of a search or listing: Mem0's `agent_id` and `run_id`.
fn session_of(run_id: Option<String>, session_id: Option<String>) -> PyResult<Option<String>> {
    match (run_id, session_id) {
        (Some(r), Some(s)) if r != s => Err(PyValueError::new_err(format!(
            "run_id {r:?} and session_id {s:?} name two sessions; give one"
        ))),
        (r, s) => Ok(s.or(r)),
    }
}

impl Memory {
    /// Runs `f` on the open store with the GIL released. When a Python model it called on
    /// this thread raised `KeyboardInterrupt` or `SystemExit` (the memory layer took it
    /// for a failed call), raises that.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&memforest::Memory) -> Result<T, MemoryError> + Send,
    ) -> PyResult<T> {
        let out = self.run(py, f);
        if let Some(interrupt) = self.failures.take_interrupt(true) {
            return Err(interrupt);
        }
        Ok(out?)
    }

    /// Runs `f` on the open store with the GIL released.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&memforest::Memory) -> Result<T, MemoryError> + Send,
    ) -> Result<T, Failure> {
        if let Err(e) = self.same_process() {
            return Err(Failure::Python(e));
        }
        py.detach(|| match self.inner.read().as_ref() {
            Some(m) => f(m).map_err(Failure::from),
            None => Err(Failure::Closed),
        })
    }

    /// Runs `op` on memory `memory_id` of `user_id` (GIL released) and returns its result
    /// as plain Python objects.
    fn by_id<'py, T: Serialize + Send>(
        &self,
        py: Python<'py>,
        memory_id: &str,
        user_id: &str,
        op: fn(&memforest::Memory, &str, MemoryId) -> Result<T, MemoryError>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let out = self.with(py, |m| op(m, user_id, memory_id.parse::<MemoryId>()?))?;
        convert::to_py(py, &out)
    }

    /// `ClosedError` in a forked child: the parent's background threads do not exist here
    /// and its locks may be held forever.
    fn same_process(&self) -> PyResult<()> {
        if std::process::id() == self.pid {
            return Ok(());
        }
        Err(Kind::Closed.err(format!(
            "this Memory was opened by process {} before a fork; open a new Memory in this \
             process",
            self.pid
        )))
    }
}

#[pymethods]
impl Memory {
    #[new]
    #[pyo3(signature = (path, *, extractor=None, summarizer=None, embedder=None, llm_url=None,
        llm_model=None, embed_model=None, api_key_env=None, durability=None,
        pool=None, extract_batch=None, summary_batch=None, read_only=false))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn new(
        py: Python<'_>,
        path: std::path::PathBuf,
        extractor: Option<Bound<'_, PyAny>>,
        summarizer: Option<Bound<'_, PyAny>>,
        embedder: Option<Bound<'_, PyAny>>,
        llm_url: Option<String>,
        llm_model: Option<String>,
        embed_model: Option<String>,
        api_key_env: Option<String>,
        durability: Option<String>,
        pool: Option<Bound<'_, PyAny>>,
        extract_batch: Option<Bound<'_, PyAny>>,
        summary_batch: Option<Bound<'_, PyAny>>,
        read_only: bool,
    ) -> PyResult<Self> {
        let failures = Arc::new(Failures::default());
        let options: Options = PyOptions {
            extractor,
            summarizer,
            embedder,
            llm_url,
            llm_model,
            embed_model,
            api_key_env,
            durability,
            pool: positive(pool.as_ref(), "pool")?,
            extract_batch: positive(extract_batch.as_ref(), "extract_batch")?,
            summary_batch: positive(summary_batch.as_ref(), "summary_batch")?,
            failures: Arc::clone(&failures),
        }
        .build()?;
        fork::check_can_open()?;
        let dir = path.clone();
        let opened = py.detach(move || {
            let builder = memforest::Memory::builder().options(options);
            if read_only {
                builder.read_only().open(&dir)
            } else {
                builder.open(&dir)
            }
        });
        let opened = opened.map_err(error::to_py)?;
        fork::opened();
        Ok(Self {
            inner: RwLock::new(Some(opened)),
            pid: std::process::id(),
            path: path.display().to_string(),
            failures,
        })
    }

    /// Adds one exchange (or a whole conversation) to a user's memory and extracts
    /// memories from it; durable when it returns.
    ///
    /// ``messages`` is a string (one user message), a dict ``{"role": "user" |
    /// "assistant" | "system", "content": str, "name"?: str, "id"?: str, "timestamp"?:
    /// datetime}`` or a list of them. ``content`` is a text string: an OpenAI-style list of
    /// content parts (``[{"type": "text", "text": ...}]``) is refused; join its text first.
    /// Messages go to session ``session_id`` (Mem0's ``run_id``; default ``"default"``),
    /// after the messages it holds; a message whose ``id`` the session already holds is
    /// skipped, so a retried ``add`` stores nothing twice. ``agent_id`` records the agent
    /// the session belongs to. ``timestamp`` is when the messages without their own were
    /// said (default: now); ``metadata`` (``dict[str, str]``) is stored with each message.
    ///
    /// Returns ``{"messages": int, "duplicates": int, "conflicts": [str], "memories":
    /// [id], "pending": int}``: messages stored, skipped as already stored, skipped for a
    /// stored id with other content; the memories created or seen again; parts still to
    /// extract in the background.
    ///
    /// With a model extractor or embedder (``"openai"`` or a Python callable), ``add``
    /// returns once the messages are durable and the model runs in the background
    /// (``memories`` is then empty, ``flush()`` waits for it), unless ``wait=True``: then
    /// it returns after the model answered, a failed call counted in ``pending`` (retried
    /// in the background; ``flush()`` names the failure, and raises a ``KeyboardInterrupt``
    /// or ``SystemExit`` the callable raised). The default extractor always runs within
    /// the call.
    ///
    /// Raises ``InvalidInputError`` for a bad user, session or agent name or a message
    /// over the limits (nothing stored), ``TypeError``/``ValueError`` for malformed
    /// messages (naming the message and key, e.g. ``messages[1].name: expected str, got
    /// dict``).
    #[pyo3(signature = (messages, *, user_id, agent_id=None, run_id=None, session_id=None,
        timestamp=None, metadata=None, wait=false))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn add<'py>(
        &self,
        py: Python<'py>,
        messages: &Bound<'py, PyAny>,
        user_id: String,
        agent_id: Option<String>,
        run_id: Option<String>,
        session_id: Option<String>,
        timestamp: Option<Bound<'py, PyAny>>,
        metadata: Option<BTreeMap<String, String>>,
        wait: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let session = session_of(run_id, session_id)?.unwrap_or_else(|| DEFAULT_SESSION.to_owned());
        let timestamp = opt_time(timestamp.as_ref(), "timestamp")?;
        let messages = messages::parse(messages, timestamp, &metadata.unwrap_or_default())?;
        let options = AddOptions {
            agent: agent_id,
            wait,
        };
        let added = self.with(py, |m| m.add_with(&user_id, &session, &messages, &options))?;
        convert::to_py(py, &added)
    }

    /// The user's memories that best answer ``query``, best first (at most ``limit``).
    ///
    /// Each is ``{"id", "text", "score", "start", "end", "current", "valid_until",
    /// "sources": [{"session", "messages"}]}``: ``start``/``end`` when what it says
    /// happened (``datetime`` or ``None``), ``current`` false when a newer memory about
    /// the same thing supersedes it (``valid_until``: when that one starts).
    ///
    /// ``since``/``until`` keep memories whose time overlaps them; ``latest_only`` drops
    /// superseded ones; ``as_of`` answers as of that time; ``agent_id`` and ``run_id``
    /// (or ``session_id``) keep memories said in that agent's sessions or that session;
    /// ``speaker`` keeps memories with that person among their participants (who said
    /// them, or someone a model extractor named; case ignored).
    ///
    /// Raises ``InvalidInputError`` for a bad user, session or agent name or a ``limit``
    /// outside 1 to 1000; ``TypeError`` for an argument of the wrong type (a ``bool`` as
    /// ``limit`` included, a time that is not a ``datetime``); ``ValueError`` for a
    /// ``run_id`` and a ``session_id`` that differ; ``ModelCallError`` when the embedder
    /// fails on the query.
    #[pyo3(signature = (query, *, user_id, limit=IntArg::Default(10), since=None, until=None,
        latest_only=false, as_of=None, agent_id=None, run_id=None, session_id=None,
        speaker=None),
        text_signature = "($self, query, *, user_id, limit=10, since=None, until=None, \
        latest_only=False, as_of=None, agent_id=None, run_id=None, session_id=None, \
        speaker=None)")]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn search<'py>(
        &self,
        py: Python<'py>,
        query: String,
        user_id: String,
        limit: IntArg<'py>,
        since: Option<Bound<'py, PyAny>>,
        until: Option<Bound<'py, PyAny>>,
        latest_only: bool,
        as_of: Option<Bound<'py, PyAny>>,
        agent_id: Option<String>,
        run_id: Option<String>,
        session_id: Option<String>,
        speaker: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = SearchOptions {
            k: search_limit(&limit)?,
            since: opt_time(since.as_ref(), "since")?,
            until: opt_time(until.as_ref(), "until")?,
            as_of: opt_time(as_of.as_ref(), "as_of")?,
            latest_only,
            session: session_of(run_id, session_id)?,
            agent: agent_id,
            speaker,
            ..SearchOptions::default()
        };
        let hits = self.with(py, |m| m.search(&user_id, &query, &options))?;
        convert::to_py(py, &hits)
    }

    /// A prompt-ready text for ``query`` from the user's memory, at most about
    /// ``max_tokens`` tokens (bytes / 4): the relevant memories with their time tags, then
    /// the last messages of the latest session. Scope options as ``search``.
    ///
    /// Raises as ``search`` does, and ``InvalidInputError`` for a negative ``max_tokens``.
    #[pyo3(signature = (query, *, user_id, max_tokens=IntArg::Default(1000),
        limit=IntArg::Default(10), latest_only=false, as_of=None, agent_id=None, run_id=None,
        session_id=None, speaker=None),
        text_signature = "($self, query, *, user_id, max_tokens=1000, limit=10, \
        latest_only=False, as_of=None, agent_id=None, run_id=None, session_id=None, \
        speaker=None)")]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn context(
        &self,
        py: Python<'_>,
        query: String,
        user_id: String,
        max_tokens: IntArg<'_>,
        limit: IntArg<'_>,
        latest_only: bool,
        as_of: Option<Bound<'_, PyAny>>,
        agent_id: Option<String>,
        run_id: Option<String>,
        session_id: Option<String>,
        speaker: Option<String>,
    ) -> PyResult<String> {
        let max_tokens = max_tokens.get("max_tokens", 0, usize::MAX)?;
        let options = SearchOptions {
            k: search_limit(&limit)?,
            as_of: opt_time(as_of.as_ref(), "as_of")?,
            latest_only,
            session: session_of(run_id, session_id)?,
            agent: agent_id,
            speaker,
            ..SearchOptions::default()
        };
        self.with(py, |m| m.context(&user_id, &query, max_tokens, &options))
    }

    /// Memory ``memory_id`` of the user as ``{"id", "text", "start", "end", "current",
    /// "valid_until", "sources"}`` (``current`` false when a newer memory about the same
    /// thing supersedes it, from ``valid_until``), or ``None`` when the user has no such
    /// memory.
    #[pyo3(signature = (memory_id, *, user_id))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        memory_id: String,
        user_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.by_id(py, &memory_id, &user_id, memforest::Memory::get)
    }

    /// The user's memories newest first (by when what they say happened), ``limit`` of
    /// them after skipping ``offset``; each as ``get`` returns it. ``since``/``until``,
    /// ``agent_id``, ``run_id`` (or ``session_id``) and ``latest_only`` narrow them as in
    /// ``search``; each says whether it is ``current`` and its ``valid_until``.
    ///
    /// Raises ``InvalidInputError`` for a bad user, session or agent name or a negative
    /// ``limit`` or ``offset``; ``TypeError`` for an argument of the wrong type (a
    /// ``bool`` as ``limit`` or ``offset`` included, a time that is not a ``datetime``);
    /// ``ValueError`` for a ``run_id`` and a ``session_id`` that differ.
    #[pyo3(signature = (*, user_id, limit=IntArg::Default(100), offset=IntArg::Default(0),
        since=None, until=None, agent_id=None, run_id=None, session_id=None,
        latest_only=false),
        text_signature = "($self, *, user_id, limit=100, offset=0, since=None, until=None, \
        agent_id=None, run_id=None, session_id=None, latest_only=False)")]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn get_all<'py>(
        &self,
        py: Python<'py>,
        user_id: String,
        limit: IntArg<'py>,
        offset: IntArg<'py>,
        since: Option<Bound<'py, PyAny>>,
        until: Option<Bound<'py, PyAny>>,
        agent_id: Option<String>,
        run_id: Option<String>,
        session_id: Option<String>,
        latest_only: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = ListOptions {
            limit: limit.get("limit", 0, usize::MAX)?,
            offset: offset.get("offset", 0, usize::MAX)?,
            since: opt_time(since.as_ref(), "since")?,
            until: opt_time(until.as_ref(), "until")?,
            session: session_of(run_id, session_id)?,
            agent: agent_id,
            latest_only,
        };
        let records = self.with(py, |m| m.list(&user_id, &options))?;
        convert::to_py(py, &records)
    }

    /// Replaces memory ``memory_id`` with ``text``: a new memory that supersedes the old
    /// one from now on (the old one stays in ``history``). Returns the new memory's id.
    ///
    /// Raises ``NotFoundError`` when the user has no such memory, ``InvalidInputError``
    /// for an empty text.
    #[pyo3(signature = (memory_id, text, *, user_id))]
    fn update(
        &self,
        py: Python<'_>,
        memory_id: String,
        text: String,
        user_id: String,
    ) -> PyResult<String> {
        let id = self.with(py, |m| {
            m.update(&user_id, memory_id.parse::<MemoryId>()?, &text)
        })?;
        Ok(id.to_string())
    }

    /// Deletes memory ``memory_id`` of the user (the messages it came from stay). Returns
    /// ``{"messages", "memories", "memories_updated"}``: what was removed. ``purge()``
    /// then removes the bytes from the store's files.
    ///
    /// Raises ``NotFoundError`` when the user has no such memory.
    #[pyo3(signature = (memory_id, *, user_id))]
    fn delete<'py>(
        &self,
        py: Python<'py>,
        memory_id: String,
        user_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.by_id(py, &memory_id, &user_id, memforest::Memory::delete)
    }

    /// Deletes everything of the user (messages, memories, summaries), or with
    /// ``run_id``/``session_id`` one session of theirs. Other users are untouched. Returns
    /// what ``delete`` returns; ``purge()`` then removes the bytes from the store's files.
    ///
    /// Raises ``NotFoundError`` for a user (or session) with nothing stored.
    #[pyo3(signature = (*, user_id, run_id=None, session_id=None))]
    fn delete_all<'py>(
        &self,
        py: Python<'py>,
        user_id: String,
        run_id: Option<String>,
        session_id: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let session = session_of(run_id, session_id)?;
        let deleted = self.with(py, |m| match &session {
            Some(s) => m.delete_session(&user_id, s),
            None => m.delete_user(&user_id),
        })?;
        convert::to_py(py, &deleted)
    }

    /// The versions of memory ``memory_id``, oldest first, each as ``get`` returns it and
    /// valid until the next one starts (``valid_until``; the latest is ``current``).
    ///
    /// Raises ``NotFoundError`` when the user has no such memory.
    #[pyo3(signature = (memory_id, *, user_id))]
    fn history<'py>(
        &self,
        py: Python<'py>,
        memory_id: String,
        user_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.by_id(py, &memory_id, &user_id, memforest::Memory::history)
    }

    /// What the memory holds about the user now: ``{"current": [{"subject", "attribute",
    /// "id", "text", "since"}], "user": str | None, "entities": [{"entity", "summary",
    /// "heat"}]}``.
    #[pyo3(signature = (user_id))]
    fn profile<'py>(&self, py: Python<'py>, user_id: String) -> PyResult<Bound<'py, PyAny>> {
        let profile = self.with(py, |m| m.profile(&user_id))?;
        convert::to_py(py, &profile)
    }

    /// What opening the store found and did: ``{"quarantined": [str], "unlisted":
    /// [{"name", "garbage", "reason"}], "manifest_torn_tail": int | None, "wal_missing":
    /// [int], "wal_quarantined": [str], "wal_skipped": [dict], "wal_torn_tail": [segment,
    /// offset] | None}`` (``docs/durability.md``). Data may be missing from what the store
    /// serves when ``quarantined``, ``wal_missing``, ``wal_quarantined`` or ``wal_skipped``
    /// is not empty: the open set those files aside (never deleted) or read past them;
    /// ``memforest.repair`` takes back the segment files that read back whole.
    fn open_report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let report = self.with(py, |m| Ok(m.open_report().clone()))?;
        convert::to_py(py, &report)
    }

    /// Counts for the user: ``{"sessions", "messages", "memories", "trees",
    /// "dirty_summaries", "pending_extractions", "failed_extractions"}``.
    #[pyo3(signature = (user_id))]
    fn stats<'py>(&self, py: Python<'py>, user_id: String) -> PyResult<Bound<'py, PyAny>> {
        let stats = self.with(py, |m| m.user_stats(&user_id))?;
        convert::to_py(py, &stats)
    }

    /// Rewrites the store's files without the bytes of deleted records (after ``delete``
    /// or ``delete_all``, for erasure). The ``user_id`` of a ``delete_all`` stays: it
    /// bounds the range delete that keeps the user's older writes hidden. Returns
    /// ``{"files_before", "bytes_before", "files_after", "bytes_after",
    /// "wal_segments_removed"}``.
    fn purge<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.with(py, memforest::Memory::purge)?;
        let out = PyDict::new(py);
        out.set_item("files_before", r.files_before)?;
        out.set_item("bytes_before", r.bytes_before)?;
        out.set_item("files_after", r.files_after)?;
        out.set_item("bytes_after", r.bytes_after)?;
        out.set_item("wal_segments_removed", r.wal_segments_removed)?;
        Ok(out)
    }

    /// Waits until every pending extraction and summary refresh is done.
    ///
    /// Raises ``ModelCallError`` when every extraction still pending has failed
    /// ``extract_attempts`` (4) times (a model that stays down): the messages are stored
    /// and their extraction is retried in the background and after a reopen. The message
    /// ends with the last failure of each Python model that failed (the exception's type
    /// and message, or what was wrong with its reply). A ``KeyboardInterrupt`` or
    /// ``SystemExit`` raised in a Python model in the background is raised here instead.
    ///
    /// Ctrl-C (any signal handler that raises) interrupts the wait; the background work
    /// goes on.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let flushed = loop {
            match self.run(py, |m| m.flush_summaries_for(SIGNAL_CHECK)) {
                Ok(false) => py.check_signals()?,
                done => break done.map(|_| ()),
            }
        };
        match flushed {
            Ok(()) => Ok(()),
            Err(Failure::Memory(e @ MemoryError::Model(_))) => {
                Err(self.failures.take_interrupt(false).unwrap_or_else(|| {
                    Kind::ModelCall.err(format!("{e}{}", self.failures.describe()))
                }))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Closes the store: finishes the background work, makes everything durable, releases
    /// the lock. Waits for calls in flight on other threads. Closing twice raises
    /// ``ClosedError``, as does every call after it.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.same_process()?;
        if crate::callable::inside_a_model() {
            return Err(Kind::Base.err(
                "close() was called from inside an extractor, summarizer or embedder; it \
                 waits for those calls to end, so call it after the call that runs the model \
                 returns",
            ));
        }
        let closed = py.detach(|| match self.inner.write().take() {
            Some(m) => {
                let closed = m.close();
                fork::stopped();
                closed.map_err(Failure::from)
            }
            None => Err(Failure::Closed),
        });
        Ok(closed?)
    }

    /// True once closed, and in a forked child (where it cannot be used).
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        // Waits for a close in progress without the GIL, which its work may need.
        std::process::id() != self.pid || py.detach(|| self.inner.read().is_none())
    }

    /// The store's directory.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// The `Memory` itself; ``ClosedError`` once closed (a ``with`` block would run
    /// against a closed store and fail at its first call).
    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let this = slf.borrow();
        this.same_process()?;
        if this.closed(slf.py()) {
            return Err(Failure::Closed.into());
        }
        drop(this);
        Ok(slf)
    }

    /// Closes the store unless already closed.
    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<Bound<'_, PyType>>,
        _exc: Option<Bound<'_, PyAny>>,
        _tb: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if self.closed(py) {
            return Ok(());
        }
        self.close(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = if self.closed(py) { "closed" } else { "open" };
        format!("<memforest.Memory {:?} {state}>", self.path)
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        let Some(m) = self.inner.get_mut().take() else {
            return;
        };
        if std::process::id() != self.pid {
            // A forked child: joining the parent's threads would wait forever.
            std::mem::forget(m);
            return;
        }
        // Stopping joins the worker threads, which may wait for the GIL (a Python model).
        Python::attach(|py| py.detach(move || drop(m)));
        fork::stopped();
    }
}
