//! memforest-wal: the write-ahead log every MemForest write goes through.
//!
//! A log is a directory of segment files `{id:020}.wal`. Each segment is a sequence of
//! 32 KiB blocks of checksummed physical records (RocksDB's framing,
//! [`format`](mod@format)); the first record is a [`segment_meta::SegmentMeta`] chaining the
//! segment to its predecessor; every other record is one [`WriteBatch`] ([`batch`]).
//! Concurrent appenders are combined by group commit ([`Wal::append`]) into one write and
//! at most one sync. [`Wal::open`] recovers the log under a [`RecoveryMode`] ([`recovery`]).
//!
//! The framing is reusable on its own: [`LogWriter`] over any `Write`, [`LogReader`] over a
//! byte slice (the engine's manifest uses them).
//!
//! See `docs/format/wal.md` for the bytes and `docs/durability.md` for the promises.
#![deny(clippy::indexing_slicing)]

pub mod batch;
mod error;
pub mod format;
mod group_commit;
mod ledger;
mod options;
pub mod quarantine;
pub mod record_reader;
pub mod record_writer;
pub mod recovery;
pub mod segment;
pub mod segment_meta;
mod stats;
mod wal;

pub use batch::{Compression, Entry, WriteBatch};
pub use error::{DamageReason, Result, WalError};
pub use ledger::SegmentLedger;
pub use options::{Durability, RecoveryMode, WalOptions};
pub use record_reader::{Damage, LogReader, LogRecord, RecordKind};
pub use record_writer::LogWriter;
pub use recovery::{RecoveredBatch, RecoveryReport, SegmentDamage, SegmentGap};
pub use stats::WalStats;
pub use wal::{Recovered, Wal};

#[cfg(test)]
mod tests;
