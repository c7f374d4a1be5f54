//! [`CliError`]: every failure of the library-like modules of the CLI, each naming the file
//! (and line/column or byte offset) it is about.

use std::path::PathBuf;

use memforest_engine::RepairHint;

/// A CLI failure. `main` prints it and exits non-zero.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file or directory could not be read or written.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`"read"`, `"open"`, ...).
        op: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON document (or a JSONL line) does not parse.
    #[error("{path}: invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// The input file.
        path: PathBuf,
        /// 1-based line (for JSONL: the line of the file).
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// The input parses as JSON but is not the declared format.
    #[error("{path}: not a {format} file: {reason}")]
    Format {
        /// The input file.
        path: PathBuf,
        /// The format the user declared (`locomo`, `longmemeval`, `jsonl`).
        format: &'static str,
        /// What was expected and not found.
        reason: String,
    },
    /// An entry of an input file breaks a limit of the store (a tenant name, a session or
    /// turn id, a turn text, ...); found while reading the file, before anything is
    /// stored.
    #[error("{path}: {at}: {source}")]
    Input {
        /// The input file.
        path: PathBuf,
        /// Where in it (`line 12`, `sample 3 (conv-26)`, ...).
        at: String,
        /// The tenant field, or the session, turn and field, and the limit (boxed: it is
        /// large and rare).
        #[source]
        source: Box<crate::import::check::Refused>,
    },
    /// The storage engine failed (corruption naming file and offset, lock held, I/O).
    #[error(transparent)]
    Engine(#[from] memforest_engine::Error),
    /// A tenant name is refused (empty, too long, NUL byte).
    #[error(transparent)]
    Name(#[from] memforest_engine::InputError),
    /// An object-store URL is refused (bad URL, a scheme this build lacks).
    #[error(transparent)]
    Remote(#[from] memforest_object::Error),
    /// The memory layer failed.
    #[error(transparent)]
    Memory(#[from] memforest::memory::MemoryError),
    /// An LLM client could not be built (bad URL, missing key variable).
    #[error("llm: {0}")]
    Llm(#[from] memforest_llm::LlmError),
    /// A store check found damage.
    #[error("{path}: damage at byte offset {offset}: {reason}")]
    Damage {
        /// The damaged file.
        path: PathBuf,
        /// Byte offset of the damage in that file.
        offset: u64,
        /// What is wrong.
        reason: String,
        /// The repair that mends it, if one does
        /// ([`memforest_engine::Error::repair_hint`]).
        hint: Option<RepairHint>,
    },
    /// A bad command-line value (unknown tenant, empty store, ...).
    #[error("{0}")]
    Usage(String),
}

impl CliError {
    /// An [`CliError::Io`] for `op` on `path`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { op, path, source }
    }

    /// A [`CliError::Json`] for a serde_json error in `path`, `line_base` lines in.
    pub fn json(path: impl Into<PathBuf>, line_base: usize, e: &serde_json::Error) -> Self {
        Self::Json {
            path: path.into(),
            line: line_base + e.line(),
            column: e.column(),
            message: e.to_string(),
        }
    }
}

/// Result alias of the CLI modules.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// What a repair does about `e` (a [`CliError`], a memory-layer or an engine error) when
/// it is damage on disk ([`memforest_engine::Error::repair_hint`], also behind the damage
/// `verify` and `wal check` report).
#[must_use]
pub fn repair_hint(e: &(dyn std::error::Error + 'static)) -> Option<RepairHint> {
    if let Some(x) = e.downcast_ref::<memforest_engine::Error>() {
        return x.repair_hint();
    }
    if let Some(m) = e.downcast_ref::<memforest::memory::MemoryError>() {
        return m.repair_hint();
    }
    match e.downcast_ref::<CliError>() {
        Some(CliError::Damage { hint, .. }) => *hint,
        Some(CliError::Engine(x)) => x.repair_hint(),
        Some(CliError::Memory(m)) => m.repair_hint(),
        _ => None,
    }
}
