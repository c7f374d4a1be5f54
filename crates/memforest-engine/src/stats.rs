//! [`Stats`]: what the engine has done and what it holds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Why a writer waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallReason {
    /// Too many sealed memtables were waiting for the flush thread (RocksDB
    /// `max_write_buffer_number`).
    Memtables,
    /// Level 0 held too many files (RocksDB `level0_stop_writes_trigger`).
    L0Files,
}

/// Counters updated by the engine.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub user_bytes: AtomicU64,
    pub flush_count: AtomicU64,
    pub flush_bytes: AtomicU64,
    pub flush_micros: AtomicU64,
    pub compaction_count: AtomicU64,
    pub compaction_declined: AtomicU64,
    pub compaction_bytes_read: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub compaction_micros: AtomicU64,
    pub stall_memtable_count: AtomicU64,
    pub stall_memtable_micros: AtomicU64,
    pub stall_l0_count: AtomicU64,
    pub stall_l0_micros: AtomicU64,
}

impl Counters {
    /// Adds `d` (microseconds) and one to the pair.
    pub fn time(count: &AtomicU64, micros: &AtomicU64, d: Duration) {
        count.fetch_add(1, Ordering::Relaxed);
        micros.fetch_add(
            u64::try_from(d.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Records a stall of `d` for `reason`.
    pub fn stall(&self, reason: StallReason, d: Duration) {
        match reason {
            StallReason::Memtables => {
                Self::time(&self.stall_memtable_count, &self.stall_memtable_micros, d);
            }
            StallReason::L0Files => Self::time(&self.stall_l0_count, &self.stall_l0_micros, d),
        }
    }
}

/// Files and bytes of one level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// Segment files.
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// A snapshot of the engine's statistics (`Db::stats`). Times are in microseconds, sizes
/// in bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Key + value bytes of every batch written since open.
    pub user_bytes: u64,
    /// Bytes appended to the WAL since open.
    pub wal_bytes_written: u64,
    /// Bytes of segment files written by flushes since open.
    pub flush_bytes_written: u64,
    /// Bytes of segment files written by compactions since open.
    pub compaction_bytes_written: u64,
    /// Bytes of segment files read by compactions since open.
    pub compaction_bytes_read: u64,
    /// (WAL + flush + compaction bytes written) / user bytes; 0 before any write.
    pub write_amplification: f64,
    /// Per level.
    pub levels: Vec<LevelStats>,
    /// Bytes held by the active and sealed memtables (approximate).
    pub memtable_bytes: u64,
    /// Sealed memtables waiting for a flush.
    pub immutable_memtables: usize,
    /// Bytes of the WAL files on disk now.
    pub wal_bytes: u64,
    /// Flushes done and their total time.
    pub flush_count: u64,
    /// Total flush time, microseconds.
    pub flush_micros: u64,
    /// Compactions committed.
    pub compaction_count: u64,
    /// Compactions declined at commit because their inputs changed.
    pub compaction_declined: u64,
    /// Total compaction time, microseconds.
    pub compaction_micros: u64,
    /// Writer stalls on sealed memtables: count and total microseconds.
    pub stall_memtable_count: u64,
    /// Total time writers waited on sealed memtables, microseconds.
    pub stall_memtable_micros: u64,
    /// Writer stalls on level-0 file count: count and total microseconds.
    pub stall_l0_count: u64,
    /// Total time writers waited on level 0, microseconds.
    pub stall_l0_micros: u64,
    /// Total segment bytes / bytes of the deepest non-empty level (RocksDB's estimate of
    /// space amplification for leveled compaction; 1.0 when everything is in one level,
    /// 0 when there is no file).
    pub space_amplification: f64,
    /// Live range tombstones held in memory.
    pub range_tombstones: usize,
}

impl Counters {
    /// Fills the counter fields of `s`.
    pub fn fill(&self, s: &mut Stats) {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        s.user_bytes = l(&self.user_bytes);
        s.flush_bytes_written = l(&self.flush_bytes);
        s.flush_count = l(&self.flush_count);
        s.flush_micros = l(&self.flush_micros);
        s.compaction_count = l(&self.compaction_count);
        s.compaction_declined = l(&self.compaction_declined);
        s.compaction_bytes_read = l(&self.compaction_bytes_read);
        s.compaction_bytes_written = l(&self.compaction_bytes_written);
        s.compaction_micros = l(&self.compaction_micros);
        s.stall_memtable_count = l(&self.stall_memtable_count);
        s.stall_memtable_micros = l(&self.stall_memtable_micros);
        s.stall_l0_count = l(&self.stall_l0_count);
        s.stall_l0_micros = l(&self.stall_l0_micros);
    }
}
