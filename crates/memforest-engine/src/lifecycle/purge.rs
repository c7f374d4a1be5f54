//! `Db::purge`: make forgotten bytes leave the directory. Waits for every dirty summary to
//! be regenerated (so no node page keeps a stale summary), rotates the WAL, compacts every
//! segment file into the bottom level (dropping every shadowed version and tombstone no
//! snapshot needs), deletes the WAL segments closed by the rotation, and rewrites the
//! manifest as a snapshot (its edit log names the key ranges of deleted files).

use std::path::Path;

use crate::db::Db;
use crate::memory::MemoryError;

/// What a purge removed, measured over the store's directory (WAL included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PurgeReport {
    /// Files before.
    pub files_before: u64,
    /// Bytes before.
    pub bytes_before: u64,
    /// Files after.
    pub files_after: u64,
    /// Bytes after.
    pub bytes_after: u64,
    /// WAL segments deleted.
    pub wal_segments_removed: u64,
}

/// (files, bytes) under `dir`, recursively.
fn usage(dir: &Path) -> Result<(u64, u64), MemoryError> {
    let io = |e| {
        MemoryError::Engine(crate::Error::Io {
            op: "read dir",
            path: dir.to_path_buf(),
            source: e,
        })
    };
    let mut out = (0, 0);
    for e in std::fs::read_dir(dir).map_err(io)? {
        let e = e.map_err(io)?;
        let meta = e.metadata().map_err(io)?;
        if meta.is_dir() {
            let (f, b) = usage(&e.path())?;
            out = (out.0 + f, out.1 + b);
        } else {
            out = (out.0 + 1, out.1 + meta.len());
        }
    }
    Ok(out)
}

impl Db {
    /// Purges: after it returns (with no snapshot held and no concurrent writer), no file
    /// in the directory holds a value deleted or overwritten before the call. Needs the
    /// summarizer to succeed for the dirty nodes (it waits for them).
    ///
    /// # Errors
    /// [`MemoryError::Engine`] for flush, compaction, WAL or directory errors; the memory
    /// runtime's error while waiting for summaries.
    pub fn purge(&self) -> Result<PurgeReport, MemoryError> {
        self.flush_summaries()?;
        let (files_before, bytes_before) = usage(self.dir())?;
        let core = self.core();
        core.wal.rotate().map_err(crate::Error::from)?;
        let rotated = core.wal.last_seqno();
        self.compact_all()?;
        let removed = core.wal.purge_up_to(rotated).map_err(crate::Error::from)?;
        core.rewrite_manifest()?;
        let (files_after, bytes_after) = usage(self.dir())?;
        Ok(PurgeReport {
            files_before,
            bytes_before,
            files_after,
            bytes_after,
            wal_segments_removed: removed as u64,
        })
    }
}
