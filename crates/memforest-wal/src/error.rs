//! Error types: what went wrong, in which segment, at which byte offset.

use std::path::PathBuf;
use std::sync::Arc;

/// Why a region of a segment could not be used. Carried by [`WalError::Corruption`] and by
/// the damage list of a [`crate::RecoveryReport`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DamageReason {
    /// Fewer than a header's bytes remain in the file and they are not all zero (torn write).
    #[error("truncated record header")]
    TruncatedHeader,
    /// The header's length runs past the end of the file (torn write).
    #[error("truncated record payload: {len} bytes declared")]
    TruncatedPayload {
        /// Declared payload length, in bytes.
        len: u16,
    },
    /// The header's length runs past the end of its 32 KiB block.
    #[error("record length {len} runs past the end of its block")]
    LengthPastBlock {
        /// Declared payload length, in bytes.
        len: u16,
    },
    /// The stored checksum does not match type + segment id + payload.
    #[error("checksum mismatch")]
    ChecksumMismatch,
    /// A zero header (a zeroed region) followed later in the file by non-zero bytes.
    #[error("zeroed bytes followed by non-zero data")]
    ZerosThenData,
    /// A valid record whose header names another segment.
    #[error("record belongs to segment {found}")]
    WrongSegment {
        /// Segment id found in the header.
        found: u64,
    },
    /// A valid record with a type this version does not know (`5..=0x7f`).
    #[error("unknown record type {0:#04x}")]
    UnknownType(u8),
    /// A `Middle` or `Last` fragment with no `First` before it.
    #[error("fragment without a First fragment")]
    OrphanFragment,
    /// A `First` (and maybe `Middle`s) not completed by a `Last`.
    #[error("fragmented record without its Last fragment")]
    UnfinishedRecord,
    /// The segment file holds no bytes at all: a rotation was interrupted between creating
    /// the file and writing its metadata record. Not a valid record, so as the last segment
    /// it is a torn tail.
    #[error("empty segment (no metadata record)")]
    EmptySegment,
    /// The segment does not start with a valid segment metadata record.
    #[error("segment metadata record missing or invalid: {0}")]
    BadMetadata(&'static str),
    /// A valid record whose payload is not a valid write batch.
    #[error("invalid write batch at payload byte {offset}: {reason}")]
    BadBatch {
        /// Offset inside the logical record's payload.
        offset: usize,
        /// What was expected there.
        reason: &'static str,
    },
    /// A batch whose first sequence number does not follow the previous batch's last one.
    #[error("sequence number gap: expected {expected}, found {found}")]
    SeqnoGap {
        /// The next sequence number the log should hold.
        expected: u64,
        /// The batch's first sequence number.
        found: u64,
    },
    /// The segment's valid records end (at a clean end: zeros or the end of the file)
    /// before the length it was last synced at in full ([`crate::SegmentLedger::synced_len`]):
    /// whole acknowledged records were zeroed or cut off.
    #[error(
        "the segment's records end before its synced length of {synced} bytes: \
         acknowledged writes are missing"
    )]
    SyncedBytesMissing {
        /// The length in bytes the segment was synced at in full.
        synced: u64,
    },
    /// A segment whose metadata names a different predecessor than the segment before it,
    /// or a different last sequence number: a segment is missing or was truncated.
    #[error(
        "predecessor mismatch: metadata names segment {named_id} ending at seqno {named_seqno}, \
         but the previous segment is {actual_id} ending at seqno {actual_seqno}"
    )]
    PredecessorMismatch {
        /// Predecessor id stored in this segment's metadata.
        named_id: u64,
        /// Predecessor last seqno stored in this segment's metadata.
        named_seqno: u64,
        /// Id of the segment actually present before this one.
        actual_id: u64,
        /// Last seqno actually recovered from that segment.
        actual_seqno: u64,
    },
}

impl DamageReason {
    /// True when the damage is itself a checksum-valid record: such a record after a bad
    /// one proves the bad region is not a torn tail.
    #[must_use]
    pub fn is_valid_record(&self) -> bool {
        matches!(
            self,
            Self::UnknownType(_)
                | Self::OrphanFragment
                | Self::BadMetadata(_)
                | Self::BadBatch { .. }
                | Self::SeqnoGap { .. }
                | Self::PredecessorMismatch { .. }
        )
    }
}

/// Every error the WAL returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalError {
    /// An I/O call failed on `path`.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// File or directory the call was about.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A segment is corrupt in a way the recovery mode does not tolerate.
    #[error("corrupt WAL segment {segment} at byte offset {offset}: {reason}")]
    Corruption {
        /// Segment id (the file `{segment:020}.wal`).
        segment: u64,
        /// Byte offset inside that segment file.
        offset: u64,
        /// What is wrong there.
        reason: DamageReason,
    },
    /// An earlier write or sync failed; no append can succeed until the WAL is reopened
    /// (the kernel may have dropped the dirty pages, so retrying a sync could lie).
    #[error("WAL is poisoned by an earlier failure: {0}")]
    Poisoned(#[source] Arc<WalError>),
    /// A write batch's encoded size is over [`crate::batch::MAX_BATCH_BYTES`].
    #[error("write batch of {size} bytes exceeds the {limit}-byte limit")]
    BatchTooLarge {
        /// Encoded size, in bytes.
        size: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The log was opened read-only ([`crate::Wal::open_read_only`]).
    #[error("the WAL was opened read-only")]
    ReadOnly,
    /// [`crate::WalOptions`] holds a value out of range.
    #[error("invalid WAL option: {0}")]
    InvalidOptions(&'static str),
}

impl WalError {
    /// Wraps an I/O error with the path it concerns.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// `Result` with [`WalError`].
pub type Result<T, E = WalError> = std::result::Result<T, E>;
