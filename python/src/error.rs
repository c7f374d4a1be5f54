//! Rust errors as the exception classes of `memforest/_errors.py`.

use memforest::MemoryError;
use memforest_engine::{Error as EngineError, RepairHint};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The exception classes `memforest/_errors.py` defines.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// `MemForestError`: the base class, for failures none of the others describe.
    Base,
    /// `CorruptStoreError`: stored bytes failed their checks.
    Corrupt,
    /// `LockedError`: another open handle holds the store's lock.
    Locked,
    /// `InvalidInputError` (also a `ValueError`): an argument breaks a limit.
    InvalidInput,
    /// `NotFoundError` (also a `KeyError`): the memory, session or user does not exist.
    NotFound,
    /// `ModelCallError`: an extractor, summarizer or embedder call failed.
    ModelCall,
    /// `ClosedError`: the `Memory` is closed (or was opened in the parent of a fork).
    Closed,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Self::Base => "MemForestError",
            Self::Corrupt => "CorruptStoreError",
            Self::Locked => "LockedError",
            Self::InvalidInput => "InvalidInputError",
            Self::NotFound => "NotFoundError",
            Self::ModelCall => "ModelCallError",
            Self::Closed => "ClosedError",
        }
    }

    /// The exception of this kind with `message`.
    pub(crate) fn err(self, message: impl Into<String>) -> PyErr {
        let message = message.into();
        Python::attach(|py| {
            let class = py
                .import("memforest._errors")
                .and_then(|m| m.getattr(self.class_name()));
            match class.and_then(|c| c.call1(PyTuple::new(py, [message.as_str()])?)) {
                Ok(exception) => PyErr::from_value(exception),
                Err(e) => e,
            }
        })
    }
}

/// The exception kind of a memory-layer error.
fn kind(e: &MemoryError) -> Kind {
    match e {
        MemoryError::Engine(e) => engine_kind(e),
        MemoryError::Tree(_) | MemoryError::Corrupt { .. } => Kind::Corrupt,
        MemoryError::Input(_)
        | MemoryError::Name(_)
        | MemoryError::BadId(_)
        | MemoryError::AgentConflict { .. }
        | MemoryError::ReservedId { .. }
        | MemoryError::ReservedSession(_) => Kind::InvalidInput,
        MemoryError::NotFound { .. } => Kind::NotFound,
        MemoryError::Model(_) => Kind::ModelCall,
        MemoryError::Stopped => Kind::Closed,
        _ => Kind::Base,
    }
}

fn engine_kind(e: &EngineError) -> Kind {
    match e {
        EngineError::Locked { .. } => Kind::Locked,
        EngineError::Corrupt { .. } => Kind::Corrupt,
        EngineError::Wal(memforest_wal::WalError::Corruption { .. }) => Kind::Corrupt,
        EngineError::Sst(memforest_sst::SstError::Corrupt { .. }) => Kind::Corrupt,
        EngineError::InvalidArgument(_) => Kind::InvalidInput,
        EngineError::Background(inner) => engine_kind(inner),
        _ => Kind::Base,
    }
}

/// `e` as the Python exception of its kind, with its message; damage on disk names the
/// repair that mends it (`MemoryError::repair_hint`).
pub(crate) fn to_py(e: MemoryError) -> PyErr {
    let hint = match e.repair_hint() {
        Some(RepairHint::Salvage) => {
            " (memforest.repair(path, salvage=True) keeps every write that reads back and \
             reports what is lost)"
        }
        Some(RepairHint::Rebuild) => {
            " (memforest.repair(path) rebuilds the store from the files that read back and \
             the write-ahead log; a segment file that does not read back whole is set aside, \
             kept on disk but no longer read)"
        }
        _ => "",
    };
    kind(&e).err(format!("{e}{hint}"))
}
