//! `memforest.repair`: [`memforest::Db::repair`] from Python, for a store that no `Memory`
//! opens (a lost `CURRENT` or manifest, quarantined files, a damaged write-ahead log).

use std::path::PathBuf;

use memforest::MemoryError;
use memforest_engine::{Options, RecoveryMode};
use pyo3::prelude::*;

use crate::{convert, error, fork};

/// Rebuilds the manifest of the store at ``path`` from the segment files and the
/// write-ahead log present, opens it, compacts it and closes it (``memforest repair`` on
/// the command line; ``docs/durability.md``, Repair). Deletes no data: what it cannot use
/// is renamed aside and reported. It adopts every segment file that reads back whole,
/// those an open set aside as ``.quarantine`` included: a segment file of another store
/// copied into the directory is set aside as ``.foreign`` only when the log or the
/// previous manifest proves it foreign, and is otherwise adopted, its records then read
/// as this store's, so move files you did not put there out of the directory first. A
/// segment file that does not read back whole stays set aside: the writes only it held
/// are no longer read.
///
/// ``salvage=True`` reads past damage in the write-ahead log, which every open (and a
/// repair without it) refuses with ``CorruptStoreError``: it keeps every write that reads
/// back, reports each damaged region and the writes lost with it, and renames the damaged
/// log segments aside, so the store opens again. Adding the lost messages again stores
/// what is missing.
///
/// Returns the report as a dict: ``adopted``, ``unquarantined``, ``unreadable``,
/// ``foreign``, ``previous_manifest``, ``wal_lost``, ``segments_lost``, ``wal_gaps``,
/// ``wal_set_aside``, ``wal_skipped`` (dicts with ``segment``, ``offset``, ``reason``,
/// ``seqnos``, ``lost``: the write numbers lost, ``lost_after``: damage at the end of the
/// log, the writes after that number it held, if any, are lost), ``wal_segments`` and
/// ``entries``.
///
/// Raises ``LockedError`` while a ``Memory`` has the store open, ``CorruptStoreError`` for
/// damage the repair does not read past, ``InvalidInputError`` for a directory that holds
/// no store, ``MemForestError`` for I/O errors.
#[pyfunction]
#[pyo3(signature = (path, *, salvage=false))]
pub(crate) fn repair(py: Python<'_>, path: PathBuf, salvage: bool) -> PyResult<Bound<'_, PyAny>> {
    fork::check_can_open()?;
    let mut options = Options::default();
    if salvage {
        options.recovery_mode = RecoveryMode::SkipAnyCorrupted;
    }
    let report = py
        .detach(|| memforest::Db::repair(&path, options))
        .map_err(|e| error::to_py(MemoryError::Engine(e)))?;
    convert::to_py(py, &report)
}
