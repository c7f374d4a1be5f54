//! [`WalOptions`], [`Durability`] and [`RecoveryMode`].

use crate::batch::Compression;

/// How durable an append must be before it returns. Ordered: a group commit syncs at the
/// strongest level any member asked for, and every member gets at least its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Durability {
    /// Written to the OS page cache (`write(2)`) before returning: survives a process crash,
    /// not a power loss or kernel crash (RocksDB `WriteOptions::sync = false`).
    #[default]
    Buffered,
    /// Also `fdatasync`ed: survives power loss (RocksDB `sync = true`).
    SyncData,
    /// Also `fsync`ed, flushing all file metadata too (RocksDB `use_fsync = true`).
    SyncAll,
}

/// What recovery does with damaged bytes (RocksDB `WALRecoveryMode`). See
/// `docs/durability.md` for the full contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// Tolerate only a damaged tail of the last segment: a torn, truncated, zeroed or
    /// garbled end after which no valid record follows. It is cut off. Any damage elsewhere,
    /// or a valid record after a bad one, refuses to open with
    /// [`crate::WalError::Corruption`] naming segment and offset
    /// (`kTolerateCorruptedTailRecords`).
    #[default]
    TolerateCorruptedTail,
    /// Recover the consistent prefix up to the first damage anywhere, report where it was,
    /// and discard everything after it: the damaged segment is truncated and later segments
    /// are deleted (`kPointInTimeRecovery`).
    PointInTime,
    /// Tolerate no damage at all, not even a torn tail (a zeroed tail is still a clean end);
    /// for tests and logs closed cleanly (`kAbsoluteConsistency`).
    AbsoluteConsistency,
    /// Skip every damaged record and keep every valid batch (salvage only): sequence gaps
    /// are accepted. Damaged bytes before the last valid record stay in place
    /// (`kSkipAnyCorruptedRecords`).
    SkipAnyCorrupted,
}

impl RecoveryMode {
    /// All modes, for tests and fuzzing.
    pub const ALL: [Self; 4] = [
        Self::TolerateCorruptedTail,
        Self::PointInTime,
        Self::AbsoluteConsistency,
        Self::SkipAnyCorrupted,
    ];
}

/// Options for [`crate::Wal::open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalOptions {
    /// A new segment is started before a group is written once the active segment holds at
    /// least this many bytes; a segment may exceed it by one group. Default 64 MiB
    /// (RocksDB `max_log_file_size`-like). Must be > 0.
    pub segment_size: u64,
    /// What recovery tolerates (RocksDB `wal_recovery_mode`).
    pub recovery_mode: RecoveryMode,
    /// When batch bodies are zstd-compressed (RocksDB `wal_compression`).
    pub compression: Compression,
}

impl Default for WalOptions {
    fn default() -> Self {
        Self {
            segment_size: 64 << 20,
            recovery_mode: RecoveryMode::default(),
            compression: Compression::default(),
        }
    }
}
