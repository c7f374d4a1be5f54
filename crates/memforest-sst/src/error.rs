//! The error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong building or reading a segment file.
///
/// Errors about bytes on disk ([`SstError::Corrupt`]) name the file and the absolute byte
/// offset in it where decoding failed (for a corrupt block: the block's first byte plus the
/// offset inside the decoded block).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SstError {
    /// An I/O call failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`"create"`, `"fsync"`, `"rename"`, ...).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A read of a file opened by range ([`crate::SstReader::open_ranged`]) failed, or
    /// returned another length than asked.
    #[error("read of {len} bytes at byte offset {offset} of {path}: {source}")]
    Fetch {
        /// The file (for an object: its name in the store).
        path: PathBuf,
        /// Absolute byte offset of the read.
        offset: u64,
        /// Bytes asked for.
        len: u64,
        /// The source's error.
        #[source]
        source: std::io::Error,
    },
    /// The file's bytes are not a valid segment file: a checksum mismatch, a bad magic or
    /// version, a handle outside the file, or a block that does not decode.
    #[error("corrupt segment file {path} at byte offset {offset}: {reason}")]
    Corrupt {
        /// The segment file.
        path: PathBuf,
        /// Absolute byte offset in the file where the problem was found.
        offset: u64,
        /// What was expected there.
        reason: &'static str,
    },
    /// Entries handed to [`crate::SstBuilder::add`] (or [`crate::SortedRun::new`]) are not
    /// strictly increasing in internal-key order (user key ascending, seqno descending).
    #[error("entry {index} is out of order in {path}: internal keys must strictly increase")]
    OutOfOrder {
        /// The file being built (empty for an in-memory run).
        path: PathBuf,
        /// Zero-based position of the offending entry in the input.
        index: u64,
    },
    /// An argument is outside what the format can hold (key or value too long, seqno above
    /// [`crate::MAX_SEQNO`], no entries, a bad option).
    #[error("invalid input for {path}: {reason}")]
    InvalidInput {
        /// The file concerned (empty for an in-memory run).
        path: PathBuf,
        /// What is wrong.
        reason: &'static str,
    },
}

/// Result alias of this crate.
pub type Result<T, E = SstError> = std::result::Result<T, E>;
