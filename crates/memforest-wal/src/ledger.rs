//! [`SegmentLedger`]: where the log reports the segments it creates, seals and deletes, so
//! the owner can record them durably (the engine records them in its manifest, as RocksDB's
//! `track_and_verify_wals_in_manifest` does) and later tell a missing or cut-short segment
//! from one that never existed.

use std::fmt::Debug;
use std::io;

/// Receives the log's segment changes, each before the log relies on it. Called with the
/// log's I/O lock held (creation) or not (deletion); an implementation must not call back
/// into the same [`crate::Wal`].
pub trait SegmentLedger: Send + Sync + Debug {
    /// Segment `id` was created and synced and is about to receive its first batch.
    /// `sealed` is the segment it closes, `(id, length in bytes)`, synced in full; `None`
    /// when the log starts a new chain (a new log, or every earlier segment dropped).
    ///
    /// # Errors
    /// Any error fails the rotation (the log is poisoned) or the open.
    fn created(&self, id: u64, sealed: Option<(u64, u64)>) -> io::Result<()>;

    /// Segments `ids` are about to be deleted (purged after a flush, or dropped by a
    /// recovery mode).
    ///
    /// # Errors
    /// Any error cancels the deletion.
    fn deleting(&self, ids: &[u64]) -> io::Result<()>;
}
