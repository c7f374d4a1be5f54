//! The WAL segments the manifest tracks (RocksDB `track_and_verify_wals_in_manifest`): the
//! [`ManifestLedger`] the log reports its segment changes to, and the check an open makes
//! before replaying, so a deleted or cut-short segment refuses to open instead of being
//! served as a shorter history.

use std::io;
use std::path::Path;
use std::sync::Arc;

use memforest_io::Storage;
use memforest_wal::{RecoveryMode, SegmentLedger};
use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::manifest::{Edit, Manifest, ManifestState};

/// Records the log's segment changes in the manifest, each made durable before the log
/// relies on it.
#[derive(Debug)]
pub(crate) struct ManifestLedger(pub Arc<Mutex<Manifest>>);

impl ManifestLedger {
    fn append(&self, edits: &[Edit]) -> io::Result<()> {
        self.0.lock().append(edits).map_err(io::Error::other)
    }
}

impl SegmentLedger for ManifestLedger {
    fn created(&self, id: u64, sealed: Option<(u64, u64)>) -> io::Result<()> {
        let mut edits = Vec::with_capacity(2);
        if let Some((id, size)) = sealed {
            edits.push(Edit::WalSealed { id, size });
        }
        edits.push(Edit::WalCreated { id });
        self.append(&edits)
    }

    fn deleting(&self, ids: &[u64]) -> io::Result<()> {
        self.append(&[Edit::WalDeleted { ids: ids.to_vec() }])
    }

    fn closed(&self, id: u64, size: u64) -> io::Result<()> {
        self.append(&[Edit::WalSealed { id, size }])
    }

    fn truncated(&self, id: u64, size: u64) -> io::Result<()> {
        self.append(&[Edit::WalSealed { id, size }])
    }

    fn synced_len(&self, id: u64) -> Option<u64> {
        self.0.lock().state().wal.get(&id).copied().flatten()
    }

    fn last_tracked(&self) -> Option<u64> {
        self.0.lock().state().wal.keys().next_back().copied()
    }

    fn lost(&self, first: u64, last: u64) -> bool {
        recorded_lost(self.0.lock().state(), first, last)
    }
}

/// The WAL tracking of a manifest not written yet (the one [`crate::Db::repair`] is about to
/// write), for a read-only recovery that checks the WAL against it. Records nothing: every
/// change is refused.
#[derive(Debug)]
pub(crate) struct StateLedger(pub ManifestState);

impl StateLedger {
    fn refused() -> io::Result<()> {
        Err(io::Error::other("a read-only WAL check records nothing"))
    }
}

impl SegmentLedger for StateLedger {
    fn created(&self, _: u64, _: Option<(u64, u64)>) -> io::Result<()> {
        Self::refused()
    }

    fn deleting(&self, _: &[u64]) -> io::Result<()> {
        Self::refused()
    }

    fn closed(&self, _: u64, _: u64) -> io::Result<()> {
        Self::refused()
    }

    fn truncated(&self, _: u64, _: u64) -> io::Result<()> {
        Self::refused()
    }

    fn synced_len(&self, id: u64) -> Option<u64> {
        self.0.wal.get(&id).copied().flatten()
    }

    fn lost(&self, first: u64, last: u64) -> bool {
        recorded_lost(&self.0, first, last)
    }
}

/// Whether `state` records the loss of WAL segments `first..=last`: it tracks WAL segments,
/// none of these, and one after them. Segments are created in id order, each recorded
/// before its first batch, and a purge records and unlinks the oldest first; so segments
/// missing below a tracked one, that the manifest no longer tracks, were given up: a loss
/// accepted by a salvage open (`RecoveryMode::SkipAnyCorrupted`) or by
/// [`crate::Db::repair`] (or purged, their batches flushed).
pub(crate) fn recorded_lost(state: &ManifestState, first: u64, last: u64) -> bool {
    use std::ops::Bound::{Excluded, Unbounded};
    state.wal_tracked
        && first <= last
        && state.wal.range(first..=last).next().is_none()
        && state
            .wal
            .range((Excluded(last), Unbounded::<u64>))
            .next()
            .is_some()
}

/// A tracked WAL segment found missing or short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lost {
    /// Segment id.
    pub id: u64,
    /// Its length when it is present but short; `None` when it is missing.
    pub len: Option<u64>,
}

/// Checks that every WAL segment `state` tracks is in `wal_dir` and at least as long as
/// its synced length. Under [`RecoveryMode::SkipAnyCorrupted`] (salvage) what is missing or
/// short is returned instead of refused.
///
/// # Errors
/// [`Error::Corrupt`] naming the first missing or short segment; [`Error::Io`] when one
/// cannot be examined.
pub(crate) fn check(
    fs: &dyn Storage,
    wal_dir: &Path,
    state: &ManifestState,
    mode: RecoveryMode,
) -> Result<Vec<Lost>> {
    let mut lost = Vec::new();
    for (&id, synced) in &state.wal {
        let path = memforest_wal::segment::path(wal_dir, id);
        let problem = match fs.file_len(&path) {
            Ok(len) => match synced {
                Some(size) if len < *size => Some((
                    Some(len),
                    format!(
                        "WAL segment holds {len} bytes, the manifest records {size} synced \
                         bytes: acknowledged writes are missing"
                    ),
                )),
                _ => None,
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => Some((
                None,
                "WAL segment recorded in the manifest as live is missing: the writes it \
                 held are lost unless it is restored (`memforest repair` accepts the loss)"
                    .to_string(),
            )),
            Err(e) => return Err(Error::io("stat", &path)(e)),
        };
        if let Some((len, reason)) = problem {
            if mode != RecoveryMode::SkipAnyCorrupted {
                return Err(Error::corrupt(path, len.unwrap_or(0), reason));
            }
            lost.push(Lost { id, len });
        }
    }
    Ok(lost)
}
