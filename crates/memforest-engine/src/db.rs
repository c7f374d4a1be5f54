//! [`Db`]: the engine handle.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;
use memforest_io::Storage;
use memforest_sst::{BoxedSource, MergeIterator, ScanOptions};
use memforest_wal::{Durability, Wal, WalOptions};

use crate::background;
use crate::batch::{Op, WriteBatch};
use crate::core::{apply_entry, Core, LsmState};
use crate::error::{Error, Result};
use crate::key::{self, prefix_successor, Table, TenantId, RESERVED_PREFIX};
use crate::lock::DirLock;
use crate::manifest::{self, Manifest, ManifestState};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::range_del::{self, RangeTombstone, RangeTombstones};
use crate::scan::Scan;
use crate::snapshot::Snapshot;
use crate::stats::Stats;
use crate::version::{Segment, Version};

/// Name of the WAL directory inside the database directory.
pub const WAL_DIR: &str = "wal";

/// An open database: one ordered keyspace of tenants and tables, written through the WAL,
/// readable at snapshots, compacted in the background. `Send + Sync`: share it (e.g. in an
/// `Arc`) between threads.
///
/// Dropping it stops the background threads without syncing anything (a crash, as far as
/// unsynced data goes: `Buffered` writes stay in the OS page cache and survive a process
/// exit); [`Db::close`] also syncs the WAL and reports background errors.
#[derive(Debug)]
pub struct Db {
    core: Arc<Core>,
    threads: Vec<JoinHandle<()>>,
    /// The memory layer (scheduler + worker pools); `None` only while opening or closing.
    memory: Option<crate::memory::Runtime>,
    /// The read path's heat and page cache.
    pub(crate) recall: crate::recall::RecallState,
    _lock: DirLock,
}

impl Db {
    /// Opens (or creates) the database in `dir`: takes the lock file, reads `CURRENT` ->
    /// manifest -> segment files, replays the WAL under `options.recovery_mode`, removes
    /// orphaned segment, manifest and temporary files, and starts the background threads.
    /// Opening an existing database writes nothing (the manifest is resumed, a torn last
    /// manifest record is cut off by the next manifest append, the WAL appends to its last
    /// segment), so it works on a full disk; removing orphans only frees space.
    ///
    /// # Errors
    /// [`Error::Locked`] when another handle has the directory open; [`Error::Corrupt`]
    /// naming `CURRENT` or the manifest and the offset; [`Error::Sst`] naming a corrupt or
    /// missing segment file; [`Error::Wal`] for WAL damage the recovery mode refuses;
    /// [`Error::Io`]; [`Error::InvalidArgument`] for bad options.
    pub fn open(dir: impl AsRef<Path>, options: Options) -> Result<Self> {
        options.validate()?;
        let dir = dir.as_ref().to_path_buf();
        let storage = Arc::clone(&options.storage);
        let fs = &*storage;
        fs.create_dir_all(&dir)
            .map_err(Error::io("create dir", &dir))?;
        let lock = DirLock::acquire(&dir)?;
        let loaded = Manifest::load(&storage, &dir)?;
        let current = loaded.as_ref().map_or(0, Manifest::id);
        let mut mstate = loaded
            .as_ref()
            .map(|m| m.state().clone())
            .unwrap_or_default();
        let budgets = memforest_sst::ReadBudgets {
            residency: memforest_sst::Residency::new(options.segment_resident_bytes),
            descriptors: Arc::clone(memforest_sst::DescriptorTable::shared()),
        };
        let mut segments = Vec::with_capacity(mstate.segments.len());
        for (level, info) in &mstate.segments {
            let level = usize::from(*level);
            if level >= options.num_levels {
                return Err(Error::InvalidArgument(
                    "the manifest has more levels than num_levels",
                ));
            }
            segments.push((
                level,
                Arc::new(Segment::open(
                    &storage,
                    &budgets,
                    &options.sst,
                    &dir,
                    info.clone(),
                )?),
            ));
        }
        let version = Version::from_segments(options.num_levels, segments);
        let quarantine = loaded.as_ref().and_then(Manifest::dropped_tail).is_some();
        let max_id = remove_orphans(fs, &dir, &mstate, current, quarantine)?;
        let wal_options = WalOptions {
            segment_size: options.wal_segment_size,
            recovery_mode: options.recovery_mode,
            compression: options.wal_compression,
        };
        let wal_storage = Arc::clone(&storage);
        let (wal, recovered) = Wal::open_with(wal_storage, dir.join(WAL_DIR), wal_options)?;
        pad_wal_seqno(&wal, mstate.flushed_seqno)?;
        let mem = MemTable::new();
        for b in &recovered.batches {
            for (seqno, e) in (b.first_seqno..).zip(b.batch.entries()) {
                if seqno > mstate.flushed_seqno && apply_entry(&mem, e, seqno).is_none() {
                    let path = memforest_wal::segment::path(&dir.join(WAL_DIR), b.segment);
                    return Err(Error::corrupt(
                        path,
                        b.offset,
                        "unknown engine op in a WAL batch",
                    ));
                }
            }
        }
        let mem = Arc::new(mem);
        let tombstones = load_tombstones(&dir, &version, &mem)?;
        let mut next_file_id = mstate.next_file_id.max(max_id + 1).max(current + 1);
        // An existing manifest is resumed as it is (recovery writes nothing, so it works
        // on a full disk); only a new database writes its first manifest here.
        let manifest = match loaded {
            Some(m) => m,
            None => {
                let id = next_file_id;
                next_file_id += 1;
                mstate.next_file_id = next_file_id;
                Manifest::create(&storage, &dir, id, mstate)?
            }
        };
        let state = LsmState {
            active: mem,
            imm: Vec::new(),
            version: Arc::new(version),
            tombstones,
        };
        let memory_options = options.memory.clone();
        let core = Arc::new(Core::new(
            dir,
            options,
            wal,
            state,
            manifest,
            next_file_id,
            budgets,
        ));
        let threads = background::spawn(&core)?;
        let mut db = Self {
            core,
            threads,
            memory: None,
            recall: crate::recall::RecallState::default(),
            _lock: lock,
        };
        db.core.seal(false);
        db.core.request_compaction();
        db.memory = Some(crate::memory::Runtime::start(&db, memory_options).map_err(
            |e| match e {
                crate::memory::MemoryError::Engine(e) => e,
                other => Error::corrupt(db.dir(), 0, other.to_string()),
            },
        )?);
        Ok(db)
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
    /// `table tag | key` (see [`Table::from_tag`]).
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
            let tenant = TenantId::new(decoded.tenant)?;
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

    /// Deletes every key of `tenant` (one range delete).
    ///
    /// # Errors
    /// As [`Db::write`].
    pub fn drop_tenant(&self, tenant: &TenantId, durability: Durability) -> Result<u64> {
        let mut b = WriteBatch::new();
        b.delete_tenant(tenant);
        self.write(&b, durability)
    }

    /// Deletes the derived tables ([`Table::DERIVED`]) of every tenant, in one batch of
    /// range deletes, so they can be regenerated.
    ///
    /// # Errors
    /// As [`Db::write`] and [`Db::tenants`].
    pub fn drop_derived(&self, durability: Durability) -> Result<u64> {
        let mut b = WriteBatch::new();
        for tenant in self.tenants()? {
            for table in Table::DERIVED {
                b.delete_table(&tenant, table);
            }
        }
        self.write(&b, durability)
    }

    /// Seals the memtable and waits until everything written so far is in segment files.
    ///
    /// # Errors
    /// The flush's error.
    pub fn flush(&self) -> Result<()> {
        self.core.flush_all()
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

    /// The engine core (for the memory layer's scheduler thread).
    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// The memory layer, while running.
    pub(crate) fn memory_runtime(&self) -> Option<&crate::memory::Runtime> {
        self.memory.as_ref()
    }

    /// The database directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.core.dir
    }

    /// Stops the background threads (letting a running flush or compaction finish), syncs
    /// the WAL, and releases the lock.
    ///
    /// # Errors
    /// A background error recorded earlier; the WAL sync's error.
    pub fn close(mut self) -> Result<()> {
        if let Some(mut m) = self.memory.take() {
            m.stop(true);
        }
        background::shutdown(&self.core, std::mem::take(&mut self.threads));
        if let Some(e) = self.core.bg_error() {
            return Err(Error::Background(e));
        }
        self.core.wal.sync()?;
        Ok(())
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(mut m) = self.memory.take() {
            m.stop(false);
        }
        background::shutdown(&self.core, std::mem::take(&mut self.threads));
    }
}

/// When the recovery mode dropped WAL batches that are already in segment files (damage
/// before the flushed point), appends no-op entries until the WAL's seqno reaches
/// `flushed`, so new writes never reuse a seqno that segment files hold.
fn pad_wal_seqno(wal: &Wal, flushed: u64) -> Result<()> {
    const CHUNK: u64 = 1 << 20;
    while wal.last_seqno() < flushed {
        let mut pad = memforest_wal::WriteBatch::new();
        for _ in 0..(flushed - wal.last_seqno()).min(CHUNK) {
            pad.push(Op::Noop as u8, Vec::new(), Vec::new());
        }
        wal.append(&pad, Durability::SyncData)?;
    }
    Ok(())
}

fn successor_bound(prefix: &[u8]) -> Bound<Bytes> {
    match prefix_successor(prefix) {
        Some(end) => Bound::Excluded(Bytes::from(end)),
        None => Bound::Unbounded,
    }
}

/// Suffix of a segment file set aside at open (see [`remove_orphans`]).
pub const QUARANTINE_SUFFIX: &str = ".quarantine";

/// Removes segment files the manifest does not list, temporary files, and manifests other
/// than the current one; returns the largest file id seen (live or removed).
///
/// With `quarantine` (the manifest's last record was dropped as torn), unlisted segment
/// files are renamed to `<name>.quarantine` instead of removed: a torn append and a bit
/// flip in the last committed record look alike, and in the second case such a file may
/// hold flushed data whose WAL is already gone. Nothing reads or removes quarantined
/// files; `Db::verify` lists them. A failed rename fails the open (nothing is deleted).
fn remove_orphans(
    fs: &dyn Storage,
    dir: &Path,
    state: &ManifestState,
    current: u64,
    quarantine: bool,
) -> Result<u64> {
    let mut max_id = 0;
    let names = fs.list_dir(dir).map_err(Error::io("read dir", dir))?;
    for name in &names {
        let path: PathBuf = dir.join(name);
        let orphan = if name.ends_with(".tmp") {
            true
        } else if let Some(id) = name
            .strip_suffix(".sst")
            .and_then(|n| n.parse::<u64>().ok())
        {
            max_id = max_id.max(id);
            !state.segments.iter().any(|(_, s)| s.id == id)
        } else if let Some(id) = manifest::parse_file_name(name) {
            max_id = max_id.max(id);
            id != current
        } else {
            false
        };
        if orphan && quarantine && name.ends_with(".sst") {
            let to = dir.join(format!("{name}{QUARANTINE_SUFFIX}"));
            fs.rename(&path, &to).map_err(Error::io("rename", &path))?;
        } else if orphan {
            fs.remove_file(&path).map_err(Error::io("remove", &path))?;
        }
    }
    Ok(max_id)
}

/// Every range tombstone stored in the segment files or the replayed memtable.
fn load_tombstones(dir: &Path, version: &Version, mem: &Arc<MemTable>) -> Result<RangeTombstones> {
    let lower = Bytes::copy_from_slice(&range_del::PREFIX);
    let upper = successor_bound(&range_del::PREFIX);
    let mut sources: Vec<BoxedSource> = vec![Box::new(mem.cursor())];
    sources.extend(version.sources(Bound::Included(&lower[..]), Bound::Unbounded)?);
    let options = ScanOptions {
        lower: Bound::Included(lower),
        upper,
        ..ScanOptions::default()
    };
    let mut found = Vec::new();
    for e in MergeIterator::scan(sources, options)? {
        let e = e?;
        let t = RangeTombstone::decode(&e.user_key, &e.value)
            .ok_or_else(|| Error::corrupt(dir, 0, "a stored range tombstone does not decode"))?;
        found.push(t);
    }
    Ok(RangeTombstones::default().with(found))
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
                db.put(&t, Table::Facts, &[i], &[round], Durability::Buffered)
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
                db.get(&t, Table::Facts, &[i]).unwrap().as_deref(),
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
