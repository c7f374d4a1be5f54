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

    /// Segments `ids` are about to be deleted (purged after a flush) or set aside (dropped
    /// by a recovery mode).
    ///
    /// # Errors
    /// Any error cancels the deletion.
    fn deleting(&self, ids: &[u64]) -> io::Result<()>;

    /// The log was closed cleanly ([`crate::Wal::close`]) with its active segment `id`
    /// synced in full at `size` bytes. Not called when [`SegmentLedger::synced_len`]
    /// already gives `size` for `id`.
    ///
    /// # Errors
    /// Any error fails the close.
    fn closed(&self, id: u64, size: u64) -> io::Result<()>;

    /// Recovery is about to cut segment `id` to `size` bytes, below the length
    /// [`SegmentLedger::synced_len`] gave: a salvage mode (`PointInTime`,
    /// `SkipAnyCorrupted`) gave up what lies beyond. From now on `size` is its synced
    /// length, so a crash after the cut is not read as acknowledged writes gone missing.
    ///
    /// # Errors
    /// Any error fails the open before anything is cut.
    fn truncated(&self, id: u64, size: u64) -> io::Result<()>;

    /// The length in bytes segment `id` was last synced at in full, as recorded by
    /// [`SegmentLedger::created`]'s `sealed`, [`SegmentLedger::closed`] or
    /// [`SegmentLedger::truncated`]; `None` when unknown. Recovery refuses damage before it: those bytes held acknowledged writes, so
    /// damage there is not a torn tail to cut.
    fn synced_len(&self, id: u64) -> Option<u64>;

    /// The largest segment id the ledger tracks, present or not; `None` when it tracks none
    /// (or does not track ids). A segment the log creates at open gets an id above it, so
    /// it never takes the id of a tracked segment that went missing.
    fn last_tracked(&self) -> Option<u64> {
        None
    }

    /// Whether the loss of every segment `first..=last` was recorded (they were live, went
    /// missing, and their writes were given up). Recovery then reads the segment after
    /// them as the start of a new chain instead of refusing its predecessor mismatch
    /// ([`crate::recovery::plan`]). `false` unless the ledger records such losses.
    fn lost(&self, first: u64, last: u64) -> bool {
        let _ = (first, last);
        false
    }
}
