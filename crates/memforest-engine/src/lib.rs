//! memforest-engine: the LSM storage engine under MemForest.
//!
//! One ordered keyspace of tenants and tables ([`key`]), written through the WAL
//! (`memforest-wal`, group commit) into a concurrent [`memtable`], flushed by a background
//! thread into level-0 segment files (`memforest-sst`), compacted into deeper levels
//! ([`compaction`]), readable at [`Snapshot`]s. The live files are described by the
//! [`manifest`]; `CURRENT` names it. See `docs/format/engine.md` for the bytes and
//! `docs/architecture.md` for how a write and a read flow.
//!
//! ```no_run
//! use memforest_engine::{Db, Durability, Options, Table, TenantId, WriteBatch};
//! # fn main() -> memforest_engine::Result<()> {
//! let db = Db::open("/tmp/db", Options::default())?;
//! let alice = TenantId::new("alice")?;
//! const NOTES: Table = Table::new(1); // tables are tags the application defines
//! let mut batch = WriteBatch::new();
//! batch.put(&alice, NOTES, b"note-1", b"likes tea");
//! db.write(&batch, Durability::SyncData)?;
//! assert_eq!(db.get(&alice, NOTES, b"note-1")?.as_deref(), Some(&b"likes tea"[..]));
//! db.close()
//! # }
//! ```
#![deny(clippy::indexing_slicing)]

mod background;
pub mod batch;
pub mod block_cache;
pub mod cache;
pub mod compaction;
mod core;
mod db;
mod error;
pub mod flush;
mod input;
pub mod key;
pub mod level_cursor;
pub mod level_targets;
pub mod lock;
pub mod manifest;
pub mod memtable;
mod open;
mod options;
pub mod orphans;
pub mod range_del;
pub mod remote;
pub mod remote_binding;
pub mod remote_file;
pub mod remote_flush;
pub mod remote_gc;
mod repair;
mod repair_foreign;
mod replica;
pub mod retention;
mod scan;
pub mod snapshot;
mod stats;
#[cfg(test)]
mod test_segments;
mod verify;
pub mod version;
mod wal_damage;
mod wal_tracking;

pub use batch::WriteBatch;
pub use compaction::CompactionPri;
pub use db::Db;
pub use error::{Error, RepairHint, Result};
pub use input::{check_len, check_name, InputError};
pub use key::{Table, TenantId};
pub use memforest_io::{default_storage, Storage};
pub use memforest_object::Remote;
pub use memforest_sst::SstOptions;
pub use memforest_wal::{Compression as WalCompression, Durability, RecoveryMode};
pub use open::{OpenReport, UnlistedFile, WAL_DIR};
pub use options::Options;
pub use orphans::QUARANTINE_SUFFIX;
pub use repair::{RepairReport, WalGap};
pub use scan::Scan;
pub use snapshot::Snapshot;
pub use stats::{LevelStats, StallReason, Stats};
pub use verify::VerifyReport;
pub use wal_damage::WalDamage;
