//! memforest-io: the one seam every MemForest file operation goes through.
//!
//! [`Storage`] covers what the WAL, the segment-file builder and reader, and the engine do
//! with files: create, append, sync, truncate, read, map read-only, rename, remove, list,
//! create and sync directories. [`StdStorage`] is the real filesystem (the default
//! everywhere); [`FaultStorage`] is an in-memory filesystem for tests that keeps unsynced
//! data apart from synced data, loses it on a simulated [`FaultStorage::crash`] (all of it,
//! a random prefix, or random 512-byte sectors, see [`CrashMode`]), forgets directory
//! entries not yet made durable by [`Storage::sync_dir`], and fails the Nth operation of a
//! kind with `ENOSPC` or `EIO` ([`Fault`]). Everything it does is deterministic from a seed.
//!
//! See `docs/reliability.md` for what is tested with it.

mod crash;
mod fault;
mod fault_file;
mod faults;
mod std_storage;
mod storage;

pub use crash::CrashMode;
pub use fault::FaultStorage;
pub use faults::{Errno, Fault, OpKind};
pub use std_storage::StdStorage;
pub use storage::{default_storage, ImmutableFile, Storage, WritableFile};
