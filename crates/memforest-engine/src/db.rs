//! [`Db`]: the engine handle.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;
use memforest_wal::Durability;
use parking_lot::Mutex;

use crate::background;
use crate::batch::WriteBatch;
use crate::core::Core;
use crate::error::{Error, Result};
use crate::key::{self, prefix_successor, Table, TenantId, RESERVED_PREFIX};
use crate::lock::DirLock;
use crate::open::{self, Access, OpenReport};
use crate::options::Options;
use crate::remote::{GcPolicy, GcReport};
use crate::replica;
use crate::scan::Scan;
use crate::snapshot::Snapshot;
use crate::stats::Stats;

/// An open database: one ordered keyspace of tenants and tables, written through the WAL,
/// readable at snapshots, compacted in the background. `Send + Sync`: share it (e.g. in an
/// `Arc`) between threads.
///
/// Dropping it stops the background threads without syncing or publishing anything (a
/// crash, as far as unsynced data goes: `Buffered` writes stay in the OS page cache and
/// survive a process exit); [`Db::close`] also syncs the WAL, publishes a writer's writes
/// to its object store, and reports background errors.
#[derive(Debug)]
pub struct Db {
    core: Arc<Core>,
    threads: Vec<JoinHandle<()>>,
    /// What the open found and did.
    report: OpenReport,
    /// `None` for a read-only handle.
    _lock: Option<DirLock>,
    /// A replica's object store and what it serves.
    replica: Option<replica::Following>,
    /// A writer's automatic object-store garbage collection ([`Options::remote_gc`]).
    remote_gc: Option<crate::remote_gc::Collector>,
    /// A writer's timed publication ([`Options::remote_flush_interval`]).
    remote_flush: Option<crate::remote_flush::FlushTimer>,
}

impl Db {
    /// Opens (or creates) the database in `dir`: takes the lock file, reads `CURRENT` ->
    /// manifest -> segment files, checks the WAL segments the manifest tracks and replays
    /// the WAL under `options.recovery_mode`, settles the files the manifest does not list
    /// (deleting only provable garbage, quarantining the rest: see [`OpenReport`]), and
    /// starts the background threads. A directory without `CURRENT` becomes a new store
    /// only if it is empty. Opening an existing database writes nothing unless recovery
    /// has something to record (the manifest is resumed, a torn last manifest record is
    /// cut off by the next manifest append, the WAL appends to its last segment), so it
    /// works on a full disk.
    ///
    /// # Errors
    /// [`Error::Locked`] when another handle has the directory open;
    /// [`Error::NotAStore`] for a directory with files but no `CURRENT`;
    /// [`Error::Corrupt`] naming `CURRENT`, the manifest or a missing or short WAL segment
    /// and the offset; [`Error::Sst`] naming a corrupt or missing segment file;
    /// [`Error::Wal`] for WAL damage the recovery mode refuses; [`Error::Io`];
    /// [`Error::InvalidArgument`] for bad options or an empty `dir` (`""` is refused before
    /// anything is written; `"."` names the current directory); [`Error::NeedsLocation`]
    /// without `options.remote` for the directory of a store on an object store; with it,
    /// [`Error::ForeignDirectory`], [`Error::StaleLocal`], [`Error::Fenced`] and
    /// [`Error::Remote`] (see [`crate::remote`]).
    pub fn open(dir: impl AsRef<Path>, options: Options) -> Result<Self> {
        options.validate()?;
        open::check_dir_path(dir.as_ref())?;
        let dir = dir.as_ref().to_path_buf();
        let fs = &*options.storage;
        fs.create_dir_all(&dir)
            .map_err(Error::io("create dir", &dir))?;
        // Refused before the lock file is created, so a directory that is not a store is
        // left exactly as it was (recovery checks again under the lock).
        if fs.file_len(&dir.join(crate::manifest::CURRENT)).is_err() {
            open::creatable(fs, &dir)?;
        }
        let lock = DirLock::acquire(&dir)?;
        let recovered = open::recover(&dir, &options, Access::ReadWrite)?;
        let mut db = Self::assemble(dir, options, recovered, Some(lock), false)?;
        db.core.seal(false);
        db.core.request_compaction();
        db.threads = background::spawn(&db.core)?;
        if let (Some(remote), Some(gc)) = (&db.core.options.remote, db.core.options.remote_gc) {
            db.remote_gc = Some(crate::remote_gc::Collector::spawn(Arc::clone(remote), gc)?);
        }
        if let (Some(_), Some(every)) = (
            &db.core.options.remote,
            db.core.options.remote_flush_interval,
        ) {
            db.remote_flush = Some(crate::remote_flush::FlushTimer::spawn(&db.core, every)?);
        }
        Ok(db)
    }

    /// Opens the database in `dir` read-only (RocksDB `OpenForReadOnly`): no lock is
    /// taken and nothing is written, cut, deleted or quarantined; the WAL is replayed into
    /// memory; no background thread runs (no flush, compaction or summary refresh). It
    /// works beside a running writer (reading the state as of the open; a file the writer
    /// removes meanwhile makes the open retry), on a full disk and on a read-only file
    /// system. Every write, flush and compaction fails with [`Error::ReadOnly`].
    /// [`Db::open_report`] says what a read-write open would delete or quarantine.
    /// `options.remote` is ignored: [`Db::open_replica`] reads an object store (the
    /// directory of a writer with `Options::remote_cache_bytes` lacks the copies its cache
    /// evicted, which this open reports as missing segment files).
    ///
    /// # Errors
    /// [`Error::NotAStore`] for a directory without `CURRENT`; [`Error::InvalidArgument`] for
    /// an empty `dir`; otherwise as [`Db::open`].
    pub fn open_read_only(dir: impl AsRef<Path>, options: Options) -> Result<Self> {
        options.validate()?;
        open::check_dir_path(dir.as_ref())?;
        // Reading the directory only: nothing is fetched into it (see `open_replica`).
        let options = Options {
            remote: None,
            ..options
        };
        let dir = dir.as_ref().to_path_buf();
        const TRIES: usize = 5;
        let mut tries = 0;
        let recovered = loop {
            tries += 1;
            match open::recover(&dir, &options, Access::ReadOnly) {
                Err(e) if tries < TRIES && open::vanished(&e) => continue,
                other => break other?,
            }
        };
        Self::assemble(dir, options, recovered, None, true)
    }

    /// Opens a read replica of the object store in `options.remote`, caching its segment
    /// files in `dir` (a directory of its own, created if missing; its lock is taken): reads
    /// the newest manifest object, fetches the segment files it names that `dir` lacks (with
    /// `Options::remote_cache_bytes`: none, each is fetched on its first read), and serves
    /// reads of everything that manifest holds (the writer's flushed writes; its
    /// WAL is not shared). [`Db::refresh`] follows newer manifests. Every change fails with
    /// [`Error::ReadOnly`]. Call it from a thread that is not an async runtime's worker
    /// (in tokio, `spawn_blocking`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] without `options.remote`, for an empty `dir`, for a
    /// writer's directory (one holding a WAL) or for a directory holding files but no store;
    /// [`Error::NoRemoteManifest`]; [`Error::Remote`];
    /// [`Error::ForeignDirectory`] for a directory that cached another store (the
    /// location emptied and written again since, or another location);
    /// [`Error::Locked`]; as [`Db::open_read_only`].
    pub fn open_replica(dir: impl AsRef<Path>, options: Options) -> Result<Self> {
        options.validate()?;
        let remote = options
            .remote
            .clone()
            .ok_or(Error::InvalidArgument("open_replica needs Options::remote"))?;
        open::check_dir_path(dir.as_ref())?;
        let dir = dir.as_ref().to_path_buf();
        options
            .storage
            .create_dir_all(&dir)
            .map_err(Error::io("create dir", &dir))?;
        let lock = DirLock::acquire(&dir)?;
        let (n, state) = replica::newest(&remote)?;
        replica::check_dir(&*options.storage, &dir)?;
        let (store, new) = crate::remote_binding::check_replica(&*options.storage, &dir, &remote)?;
        replica::install(&options.storage, &dir, &state)?;
        if let Some(binding) = store.as_ref().filter(|_| new) {
            crate::remote_binding::write(&*options.storage, &dir, binding)?;
        }
        let recovered = open::recover(&dir, &options, Access::ReadOnly)?;
        let mut db = Self::assemble(dir, options, recovered, Some(lock), true)?;
        db.core.advance_visible(state.flushed_seqno);
        db.replica = Some(replica::Following {
            remote,
            store,
            serving: Mutex::new(n),
        });
        Ok(db)
    }

    /// A replica ([`Db::open_replica`]) moves to the object store's newest manifest when it
    /// is newer than the one it serves: fetches the segment files it adds (with
    /// `Options::remote_cache_bytes`: on their first read), and drops those
    /// it no longer names (their cached files are deleted once no reader holds them). Reads
    /// running meanwhile finish on the state they started on. True when it moved.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a handle that is not a replica; [`Error::Remote`]
    /// (the replica keeps serving the manifest it had); [`Error::ForeignDirectory`] once
    /// the location was emptied and written again (the replica keeps serving what it had;
    /// open the location with an empty directory to follow the new store).
    pub fn refresh(&self) -> Result<bool> {
        let Some(following) = &self.replica else {
            return Err(Error::InvalidArgument("refresh is for replicas"));
        };
        let remote = &following.remote;
        let mut serving = following.serving.lock();
        if let Some(store) = &following.store {
            let now = crate::remote_binding::store_id(remote)?;
            crate::remote_binding::check(remote, &self.core.dir, Some(store), now.as_deref())?;
        }
        let (n, state) = replica::newest(remote)?;
        if n <= *serving {
            return Ok(false);
        }
        replica::follow(&self.core, &state)?;
        *serving = n;
        Ok(true)
    }

    /// Deletes the objects of the object store in `options.remote` that no live manifest
    /// needs, under `policy` (see [`crate::remote::collect_garbage`]). Any handle on the
    /// location may run it, at any time; nothing is deleted that a manifest published
    /// within `policy.grace`, or one of the newest `policy.keep_manifests`, names.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] without `options.remote`; [`Error::Remote`];
    /// [`Error::Corrupt`].
    pub fn collect_remote_garbage(&self, policy: &GcPolicy) -> Result<GcReport> {
        let remote = self
            .core
            .options
            .remote
            .as_ref()
            .ok_or(Error::InvalidArgument("no object store in Options::remote"))?;
        crate::remote::collect_garbage(remote, policy, std::time::SystemTime::now())
    }

    /// What the automatic object-store garbage collection ([`Options::remote_gc`]) has
    /// done since the open; `None` when it does not run.
    #[must_use]
    pub fn remote_gc_stats(&self) -> Option<crate::remote_gc::RemoteGcStats> {
        self.remote_gc
            .as_ref()
            .map(crate::remote_gc::Collector::stats)
    }

    fn assemble(
        dir: PathBuf,
        options: Options,
        recovered: open::Recovered,
        lock: Option<DirLock>,
        read_only: bool,
    ) -> Result<Self> {
        let core = Arc::new(Core::new(
            dir,
            options,
            recovered.wal,
            recovered.state,
            recovered.manifest,
            recovered.next_file_id,
            recovered.budgets,
            recovered.cache,
            read_only,
        ));
        Ok(Self {
            core,
            threads: Vec::new(),
            report: recovered.report,
            _lock: lock,
            replica: None,
            remote_gc: None,
            remote_flush: None,
        })
    }

    /// What the open found and did: quarantined and removed files, a dropped torn
    /// manifest record, WAL losses salvage accepted.
    #[must_use]
    pub fn open_report(&self) -> &OpenReport {
        &self.report
    }

    /// True for a handle from [`Db::open_read_only`].
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.core.read_only
    }

    /// Writes `batch` atomically at `durability` (group-committed with concurrent
    /// writers) and returns the seqno of its last op. Once this returns the batch is
    /// visible to new reads and survives what `durability` promises.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a key over 64 KiB or a value over 64 MiB; WAL errors;
    /// [`Error::Background`] after a background failure.
    pub fn write(&self, batch: &WriteBatch, durability: Durability) -> Result<u64> {
        self.core.write(batch, durability)
    }

    /// Sets one key (a one-op batch).
    ///
    /// # Errors
    /// As [`Db::write`].
    pub fn put(
        &self,
        tenant: &TenantId,
        table: Table,
        key: &[u8],
        value: &[u8],
        durability: Durability,
    ) -> Result<u64> {
        let mut b = WriteBatch::new();
        b.put(tenant, table, key, value);
        self.core.write(&b, durability)
    }

    /// The value of `key` in `table` of `tenant`, as of now.
    ///
    /// # Errors
    /// Corruption of a segment file on the way.
    pub fn get(&self, tenant: &TenantId, table: Table, key: &[u8]) -> Result<Option<Bytes>> {
        self.core.get_latest(&tenant.key(table, key))
    }

    /// The value of `key` in `table` of `tenant` as of `snapshot`.
    ///
    /// # Errors
    /// Corruption of a segment file on the way.
    pub fn get_at(
        &self,
        snapshot: &Snapshot,
        tenant: &TenantId,
        table: Table,
        key: &[u8],
    ) -> Result<Option<Bytes>> {
        self.core.get(&tenant.key(table, key), snapshot.seqno())
    }

    /// The keys of `table` in `tenant` within `[lower, upper]`, in order, at `snapshot`
    /// (now when `None`). Keys are yielded relative to the table (without tenant and tag).
    ///
    /// # Errors
    /// Corruption of a segment file's first blocks.
    pub fn scan(
        &self,
        tenant: &TenantId,
        table: Table,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        snapshot: Option<&Snapshot>,
    ) -> Result<Scan> {
        let prefix = tenant.table_prefix(table);
        let full = |k: &[u8]| Bytes::from(tenant.key(table, k));
        let lower = match lower {
            Bound::Included(k) => Bound::Included(full(k)),
            Bound::Excluded(k) => Bound::Excluded(full(k)),
            Bound::Unbounded => Bound::Included(Bytes::from(prefix.clone())),
        };
        let upper = match upper {
            Bound::Included(k) => Bound::Included(full(k)),
            Bound::Excluded(k) => Bound::Excluded(full(k)),
            Bound::Unbounded => successor_bound(&prefix),
        };
        self.scan_raw(lower, upper, snapshot, prefix.len())
    }

    /// The keys of `table` in `tenant` starting with `prefix`, at `snapshot`.
    ///
    /// # Errors
    /// As [`Db::scan`].
    pub fn scan_prefix(
        &self,
        tenant: &TenantId,
        table: Table,
        prefix: &[u8],
        snapshot: Option<&Snapshot>,
    ) -> Result<Scan> {
        let full = tenant.key(table, prefix);
        let strip = tenant.table_prefix(table).len();
        let upper = successor_bound(&full);
        self.scan_raw(Bound::Included(Bytes::from(full)), upper, snapshot, strip)
    }

    /// Every key of `tenant`, all tables, at `snapshot`. Keys are yielded as
    /// `table tag | key` (see [`Table::tag`]).
    ///
    /// # Errors
    /// As [`Db::scan`].
    pub fn scan_tenant(&self, tenant: &TenantId, snapshot: Option<&Snapshot>) -> Result<Scan> {
        let prefix = tenant.prefix();
        let upper = successor_bound(prefix);
        self.scan_raw(
            Bound::Included(Bytes::copy_from_slice(prefix)),
            upper,
            snapshot,
            prefix.len(),
        )
    }

    fn scan_raw(
        &self,
        lower: Bound<Bytes>,
        upper: Bound<Bytes>,
        snapshot: Option<&Snapshot>,
        strip: usize,
    ) -> Result<Scan> {
        let (state, seqno) = match snapshot {
            Some(s) => (self.core.state(), s.seqno()),
            None => self.core.latest(),
        };
        Scan::new(state, lower, upper, seqno, strip)
    }

    /// The tenants that have at least one visible key, in key order. Costs one seek per
    /// tenant plus the skipped deleted entries.
    ///
    /// # Errors
    /// Corruption of a segment file.
    pub fn tenants(&self) -> Result<Vec<TenantId>> {
        let mut out = Vec::new();
        let mut lower = Bytes::new();
        loop {
            let upper = Bound::Excluded(Bytes::from_static(&[RESERVED_PREFIX]));
            let mut scan = self.scan_raw(Bound::Included(lower), upper, None, 0)?;
            let Some(item) = scan.next() else { break };
            let (k, _) = item?;
            let Some(decoded) = key::decode(&k) else {
                break;
            };
            let tenant = TenantId::from_stored(decoded.tenant)?;
            match prefix_successor(tenant.prefix()) {
                Some(next) => lower = Bytes::from(next),
                None => break,
            }
            out.push(tenant);
        }
        Ok(out)
    }

    /// A snapshot of the current state (RocksDB `GetSnapshot`); see [`Snapshot`].
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        self.core.snapshots.acquire(|| self.core.visible())
    }

    /// Another handle on the snapshot at `seqno`: `Some` while a snapshot at exactly that
    /// seqno is live (its versions are kept); `None` for any other seqno: one whose versions
    /// may be gone, or one past every live snapshot (which names no state a later read
    /// could find again).
    #[must_use]
    pub fn pin_snapshot(&self, seqno: u64) -> Option<Snapshot> {
        self.core.snapshots.pin(seqno)
    }

    /// Makes deleted and overwritten bytes leave the directory: rotates the WAL, compacts
    /// every segment file into the deepest level (dropping every version no snapshot
    /// needs), deletes the WAL segments the rotation closed, and rewrites the manifest as a
    /// snapshot (its edit log names the key ranges of deleted files). With no snapshot held
    /// and no concurrent writer, no file holds a value deleted or overwritten before the
    /// call once it returns. Returns the number of WAL segments deleted.
    ///
    /// # Errors
    /// [`Error::ReadOnly`]; flush, compaction, WAL and manifest errors.
    pub fn purge(&self) -> Result<u64> {
        let core = &self.core;
        if core.read_only {
            return Err(Error::ReadOnly);
        }
        let before = core.wal.segment_ids();
        core.wal.rotate()?;
        let rotated = core.wal.last_seqno();
        self.compact_all()?;
        // The compaction's flush may purge the closed segments itself: count what is gone.
        core.wal.purge_up_to(rotated)?;
        core.rewrite_manifest()?;
        let after = core.wal.segment_ids();
        Ok(before.iter().filter(|id| !after.contains(id)).count() as u64)
    }

    /// Deletes every key of `tenant` (one range delete).
    ///
    /// # Errors
    /// As [`Db::write`].
    pub fn drop_tenant(&self, tenant: &TenantId, durability: Durability) -> Result<u64> {
        let mut b = WriteBatch::new();
        b.delete_tenant(tenant);
        self.write(&b, durability)
    }

    /// Seals the memtable and waits until everything written so far is in segment files;
    /// with an object-storage tier ([`Options::remote`]), also until those files are
    /// uploaded and the manifest naming them is published, so the writes survive the loss
    /// of this machine.
    ///
    /// # Errors
    /// The flush's error; [`Error::Remote`] for a failed upload or publication;
    /// [`Error::Fenced`] when another writer took the store over.
    pub fn flush(&self) -> Result<()> {
        self.core.flush_all()?;
        self.core.publish_remote()
    }

    /// Waits until the background work that writes so far made due is done: every sealed
    /// memtable flushed, and no compaction due (the due ones run on the calling thread,
    /// one at a time with the compaction thread). The active memtable is not sealed, and
    /// level 0 below `Options::l0_compaction_trigger` files is not compacted (nothing is
    /// due). With other threads still writing it returns only once it catches up with
    /// them. RocksDB `DB::WaitForCompact`.
    ///
    /// # Errors
    /// The flush or compaction thread's error (also one raised meanwhile); compaction
    /// errors.
    pub fn wait_for_compact(&self) -> Result<()> {
        self.core.wait_for_compact()
    }

    /// Flushes, then merges every segment file into the deepest level, dropping every
    /// version no snapshot needs (RocksDB `CompactRange` over everything).
    ///
    /// # Errors
    /// Flush or compaction errors.
    pub fn compact_all(&self) -> Result<()> {
        self.core.compact_all()
    }

    /// Current statistics.
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.core.stats()
    }

    /// The last published seqno.
    #[must_use]
    pub fn seqno(&self) -> u64 {
        self.core.visible()
    }

    /// The engine core.
    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// The database directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.core.dir
    }

    /// Makes every acknowledged write durable (`fdatasync` of the WAL, RocksDB
    /// `SyncWAL`) and reports a background error recorded earlier. A read-only handle has
    /// nothing to sync.
    ///
    /// # Errors
    /// [`Error::Background`]; the WAL sync's error.
    pub fn sync(&self) -> Result<()> {
        if let Some(e) = self.core.bg_error() {
            return Err(Error::Background(e));
        }
        if !self.core.read_only {
            self.core.wal.sync()?;
        }
        Ok(())
    }

    /// True for a writer with an object-storage tier ([`Options::remote`]; not a replica
    /// or a read-only handle): its flushes publish to the object store.
    #[must_use]
    pub fn publishes(&self) -> bool {
        self.core.options.remote.is_some() && !self.core.read_only
    }

    /// Leaves every write acknowledged so far as durable as [`Db::close`] does, without
    /// stopping: a writer with an object-storage tier ([`Db::publishes`]) flushes and
    /// publishes ([`Db::flush`]), any other handle syncs the WAL ([`Db::sync`]). For a
    /// handle that others still share when its owner stops.
    ///
    /// # Errors
    /// As [`Db::flush`] or [`Db::sync`].
    pub fn persist(&self) -> Result<()> {
        if self.publishes() {
            self.flush()
        } else {
            self.sync()
        }
    }

    /// Stops the background threads (letting a running flush or compaction finish), syncs
    /// the WAL, and releases the lock. A writer with an object-storage tier
    /// ([`Db::publishes`]) first flushes its memtables and publishes the manifest
    /// ([`Db::flush`]), so everything it acknowledged is on the object store, where
    /// replicas and other machines see it, and survives the loss of this machine. When
    /// that fails, the close goes on (stops, syncs the WAL) and returns the error: the
    /// writes stay in the local WAL, and the next open of the directory replays and
    /// publishes them. A local store does not flush (RocksDB
    /// `avoid_flush_during_shutdown`): its WAL is as durable as a segment file, and the
    /// next open replays it.
    ///
    /// # Errors
    /// A background error recorded earlier; the flush's or publication's error
    /// ([`Error::Remote`], [`Error::Fenced`]); the WAL sync's error.
    pub fn close(mut self) -> Result<()> {
        drop(self.remote_flush.take());
        drop(self.remote_gc.take());
        let published = if self.publishes() {
            self.flush()
        } else {
            Ok(())
        };
        background::shutdown(&self.core, std::mem::take(&mut self.threads));
        if let Some(e) = self.core.bg_error() {
            return Err(Error::Background(e));
        }
        if !self.core.read_only {
            self.core.wal.close()?;
        }
        published
    }
}

impl Drop for Db {
    /// Stops the background threads, then trims a bounded segment cache to its bound: the
    /// copies that reads held while the store was open may go now.
    fn drop(&mut self) {
        // First the timer, whose flush waits for the flush thread.
        drop(self.remote_flush.take());
        background::shutdown(&self.core, std::mem::take(&mut self.threads));
        if let Some(cache) = &self.core.cache {
            cache.shrink();
        }
    }
}

pub(crate) fn successor_bound(prefix: &[u8]) -> Bound<Bytes> {
    match prefix_successor(prefix) {
        Some(end) => Bound::Excluded(Bytes::from(end)),
        None => Bound::Unbounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction;

    #[test]
    fn compaction_with_changed_inputs_is_declined() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let t = TenantId::new("t").unwrap();
        for round in 0..2u8 {
            for i in 0..50u8 {
                db.put(&t, Table::new(3), &[i], &[round], Durability::Buffered)
                    .unwrap();
            }
            db.flush().unwrap();
        }
        let stale = compaction::pick_all(&db.core.state().version).unwrap();
        assert_eq!(stale.inputs().count(), 2);
        db.compact_all().unwrap();
        db.core.execute(&stale).unwrap();
        let stats = db.stats();
        assert_eq!(stats.compaction_declined, 1, "{stats:?}");
        assert_eq!(stats.compaction_count, 1, "{stats:?}");
        for i in 0..50u8 {
            assert_eq!(
                db.get(&t, Table::new(3), &[i]).unwrap().as_deref(),
                Some(&[1u8][..])
            );
        }
        drop(stale);
        // The declined run's outputs are deleted: only the live file remains.
        let live: Vec<u64> = db
            .core
            .state()
            .version
            .all()
            .map(|(_, s)| s.info.id)
            .collect();
        let on_disk = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().ends_with(".sst")
            })
            .count();
        assert_eq!(on_disk, live.len());
    }
}
