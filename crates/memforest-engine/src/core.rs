//! [`Core`]: the state shared by the `Db` handle and its background threads, and the write,
//! read, seal, flush and compaction steps that act on it.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use memforest_sst::{Kind, MAX_KEY_LEN, MAX_VALUE_LEN};
use memforest_wal::{Durability, Entry as WalEntry, Wal};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::batch::{Op, WriteBatch};
use crate::cache::SegmentCache;
use crate::compaction::{self, CompactionTask, Outputs};
use crate::error::{Error, Result};
use crate::flush;
use crate::manifest::{Edit, Manifest};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::range_del::{RangeTombstone, RangeTombstones};
use crate::remote::{Publisher, Uploader};
use crate::snapshot::SnapshotList;
use crate::stats::{Counters, LevelStats, StallReason, Stats};
use crate::version::{Segment, SegmentInfo, Version};

/// Everything a reader needs, swapped as one `Arc` (mini-lsm `LsmStorageState`): the
/// active memtable, sealed memtables (newest first), the segment files, the range
/// tombstones.
#[derive(Debug, Clone)]
pub struct LsmState {
    /// The memtable receiving writes.
    pub active: Arc<MemTable>,
    /// Sealed memtables waiting for the flush thread, newest first.
    pub imm: Vec<Arc<MemTable>>,
    /// Live segment files.
    pub version: Arc<Version>,
    /// Live range tombstones.
    pub tombstones: RangeTombstones,
}

/// What the background threads are asked to do.
#[derive(Debug, Default)]
pub struct Work {
    /// A compaction may be due.
    pub compaction_requested: bool,
    /// Stop after the current step.
    pub shutdown: bool,
}

/// The shared engine.
#[derive(Debug)]
pub struct Core {
    /// Database directory.
    pub dir: PathBuf,
    /// Options given at open.
    pub options: Options,
    /// The write-ahead log.
    pub wal: Wal,
    state: RwLock<Arc<LsmState>>,
    /// True while `state` calls for a write stall ([`stall_reason`]), so a writer checks
    /// one flag instead of locking `state`.
    stalling: AtomicBool,
    /// The memtable receiving writes (the same one as `state.active`). Writers hold it
    /// shared from WAL append to publication and insert through it; sealing swaps it
    /// exclusively, so a sealed memtable holds every seqno up to its last.
    write_gate: RwLock<Arc<MemTable>>,
    /// Last published seqno (readers see everything up to it).
    visible: Mutex<u64>,
    visible_cv: Condvar,
    visible_seqno: AtomicU64,
    wal_failed: AtomicBool,
    /// Shared with the WAL's ledger, which records segment changes in it.
    manifest: Arc<Mutex<Manifest>>,
    next_file_id: AtomicU64,
    /// Live snapshots.
    pub snapshots: Arc<SnapshotList>,
    /// Background work requests.
    pub work: Mutex<Work>,
    /// Signalled when work is requested.
    pub work_cv: Condvar,
    stall_mu: Mutex<()>,
    stall_cv: Condvar,
    bg_error: Mutex<Option<Arc<Error>>>,
    /// Set once `bg_error` holds an error, so a writer checks one flag instead of locking.
    bg_failed: AtomicBool,
    /// Counters for [`Stats`].
    pub counters: Counters,
    /// What every open segment file shares: the resident-page budget
    /// ([`Options::segment_resident_bytes`]) and the process's descriptor table.
    pub budgets: memforest_sst::ReadBudgets,
    /// Serialises compactions; holds the round-robin key pointer of each level.
    compaction_mu: Mutex<Vec<Vec<u8>>>,
    /// Opened read-only: every change fails with [`Error::ReadOnly`].
    pub read_only: bool,
    /// With an object-storage tier: uploads new segment files before the manifest lock is
    /// taken to record them.
    uploader: Option<Uploader>,
    /// With `Options::remote_cache_bytes`: the bounded local copies of the segment files.
    pub cache: Option<Arc<SegmentCache>>,
}

impl Core {
    /// A core over recovered parts. Reads start at the later of the WAL's last seqno (all
    /// of the WAL is in `state`) and the manifest's flushed seqno (the segment files hold
    /// every write up to it): a WAL that lost its unsynced tail, which a read-write open
    /// pads, still ends before it in a read-only open.
    #[expect(clippy::too_many_arguments, reason = "the parts recovery produces")]
    pub fn new(
        dir: PathBuf,
        options: Options,
        wal: Wal,
        state: LsmState,
        manifest: Arc<Mutex<Manifest>>,
        next_file_id: u64,
        budgets: memforest_sst::ReadBudgets,
        cache: Option<Arc<SegmentCache>>,
        read_only: bool,
    ) -> Self {
        let last = wal.last_seqno().max(manifest.lock().state().flushed_seqno);
        let levels = options.num_levels;
        let stalling = AtomicBool::new(stall_reason(&state, &options).is_some());
        let write_gate = RwLock::new(Arc::clone(&state.active));
        let uploader = manifest.lock().publisher().map(Publisher::uploader);
        Self {
            dir,
            options,
            wal,
            state: RwLock::new(Arc::new(state)),
            stalling,
            write_gate,
            visible: Mutex::new(last),
            visible_cv: Condvar::new(),
            visible_seqno: AtomicU64::new(last),
            wal_failed: AtomicBool::new(false),
            manifest,
            next_file_id: AtomicU64::new(next_file_id),
            snapshots: Arc::new(SnapshotList::default()),
            work: Mutex::new(Work::default()),
            work_cv: Condvar::new(),
            stall_mu: Mutex::new(()),
            stall_cv: Condvar::new(),
            bg_error: Mutex::new(None),
            bg_failed: AtomicBool::new(false),
            counters: Counters::default(),
            budgets,
            compaction_mu: Mutex::new(vec![Vec::new(); levels]),
            read_only,
            uploader,
            cache,
        }
    }

    /// Locks the manifest: no flush or compaction commits while the guard lives, so its
    /// state and [`Core::state`]'s version agree (`Db::verify`).
    pub(crate) fn lock_manifest(&self) -> parking_lot::MutexGuard<'_, Manifest> {
        self.manifest.lock()
    }

    /// The current read state.
    pub fn state(&self) -> Arc<LsmState> {
        Arc::clone(&self.state.read())
    }

    /// The last published seqno.
    pub fn visible(&self) -> u64 {
        self.visible_seqno.load(Ordering::Acquire)
    }

    /// A fresh file id.
    pub fn alloc_id(&self) -> u64 {
        self.next_file_id.fetch_add(1, Ordering::Relaxed)
    }

    fn update_state(&self, f: impl FnOnce(&mut LsmState)) {
        let mut guard = self.state.write();
        let mut next = (**guard).clone();
        f(&mut next);
        self.stalling.store(
            stall_reason(&next, &self.options).is_some(),
            Ordering::Release,
        );
        *guard = Arc::new(next);
    }

    /// Replaces the segment files and range tombstones readers see (a replica following a
    /// newer manifest).
    pub(crate) fn install_version(&self, version: Arc<Version>, tombstones: RangeTombstones) {
        self.update_state(|s| {
            s.version = version;
            s.tombstones = tombstones;
        });
    }

    /// Publishes every seqno up to `seqno` (a replica's segment files hold them; it has no
    /// WAL).
    pub(crate) fn advance_visible(&self, seqno: u64) {
        let mut v = self.visible.lock();
        *v = (*v).max(seqno);
        self.visible_seqno.store(*v, Ordering::Release);
        self.visible_cv.notify_all();
    }

    /// The error a background thread stopped on, if any.
    pub fn bg_error(&self) -> Option<Arc<Error>> {
        self.bg_error.lock().clone()
    }

    /// Refuses a change to a read-only core.
    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly);
        }
        Ok(())
    }

    fn check_bg(&self) -> Result<()> {
        if !self.bg_failed.load(Ordering::Acquire) {
            return Ok(());
        }
        match self.bg_error() {
            Some(e) => Err(Error::Background(e)),
            None => Ok(()),
        }
    }

    /// Records a background failure and wakes every waiter.
    pub fn set_bg_error(&self, e: Error) {
        self.bg_error.lock().get_or_insert_with(|| Arc::new(e));
        self.bg_failed.store(true, Ordering::Release);
        self.notify_stalled();
    }

    fn notify_stalled(&self) {
        let _g = self.stall_mu.lock();
        self.stall_cv.notify_all();
    }

    fn notify_work(&self, compaction: bool) {
        let mut w = self.work.lock();
        w.compaction_requested |= compaction;
        self.work_cv.notify_all();
    }

    /// Asks the compaction thread to look for work.
    pub fn request_compaction(&self) {
        self.notify_work(true);
    }

    /// Writes `batch` at `durability` and returns its last seqno.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an oversized key or value; WAL errors; a background
    /// error recorded earlier.
    pub fn write(&self, batch: &WriteBatch, durability: Durability) -> Result<u64> {
        self.check_writable()?;
        if batch.is_empty() {
            return Ok(self.visible());
        }
        let oversized = batch
            .wal_batch()
            .entries()
            .iter()
            .any(|e| e.key.len() > MAX_KEY_LEN || e.value.len() > MAX_VALUE_LEN);
        if oversized {
            return Err(Error::InvalidArgument(
                "key over 64 KiB or value over 64 MiB",
            ));
        }
        self.check_bg()?;
        self.maybe_stall()?;
        let last;
        let user_bytes;
        let full;
        {
            let mem = self.write_gate.read();
            let first = match self.wal.append(batch.wal_batch(), durability) {
                Ok(first) => first,
                Err(e) => {
                    self.wal_failed.store(true, Ordering::Release);
                    let _g = self.visible.lock();
                    self.visible_cv.notify_all();
                    return Err(e.into());
                }
            };
            last = first + batch.len() as u64 - 1;
            user_bytes = batch.user_bytes();
            let mut added = Vec::new();
            let mut note = |t: Option<Option<RangeTombstone>>| {
                if let Some(Some(t)) = t {
                    added.push(t);
                }
            };
            for (seqno, e) in (first..).zip(batch.wal_batch().entries()) {
                note(apply_entry(&mem, e, seqno));
            }
            if !added.is_empty() {
                self.update_state(|s| s.tombstones = s.tombstones.with(added));
            }
            self.publish(first, last)?;
            full = mem.approximate_size() >= self.options.memtable_size;
        }
        self.counters
            .user_bytes
            .fetch_add(user_bytes, Ordering::Relaxed);
        if full {
            self.seal(false);
        }
        Ok(last)
    }

    /// Makes `first..=last` visible once every earlier seqno is (batches are published in
    /// seqno order even when their memtable inserts finish out of order).
    fn publish(&self, first: u64, last: u64) -> Result<()> {
        let mut v = self.visible.lock();
        while *v + 1 < first {
            if self.wal_failed.load(Ordering::Acquire) {
                return Err(Error::WalFailed);
            }
            self.visible_cv.wait(&mut v);
        }
        *v = (*v).max(last);
        self.visible_seqno.store(*v, Ordering::Release);
        self.visible_cv.notify_all();
        Ok(())
    }

    fn stall_reason(&self) -> Option<StallReason> {
        stall_reason(&self.state.read(), &self.options)
    }

    /// Waits (on a condition variable, never spinning) while too many memtables wait for a
    /// flush or level 0 holds too many files; both have background work queued.
    fn maybe_stall(&self) -> Result<()> {
        if !self.stalling.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut stalled: Option<(StallReason, Instant)> = None;
        let mut g = self.stall_mu.lock();
        let result = loop {
            let Some(reason) = self.stall_reason() else {
                break Ok(());
            };
            if let Err(e) = self.check_bg() {
                break Err(e);
            }
            if reason == StallReason::L0Files {
                self.request_compaction();
            }
            stalled.get_or_insert((reason, Instant::now()));
            self.stall_cv.wait(&mut g);
        };
        drop(g);
        if let Some((reason, since)) = stalled {
            self.counters.stall(reason, since.elapsed());
        }
        result
    }

    /// Seals the active memtable (when `force`, or when it is over the size threshold) and
    /// hands it to the flush thread. An empty memtable is never sealed.
    pub fn seal(&self, force: bool) {
        if self.read_only {
            return;
        }
        let mut gate = self.write_gate.write();
        if gate.is_empty() || (!force && gate.approximate_size() < self.options.memtable_size) {
            return;
        }
        // No WAL rotation here: a rotation fsyncs the active segment while appends wait.
        // WAL segments rotate by size and are purged once every batch in them is flushed.
        let fresh = Arc::new(MemTable::new());
        let sealed = std::mem::replace(&mut *gate, Arc::clone(&fresh));
        self.update_state(|s| {
            s.imm.insert(0, sealed);
            s.active = fresh;
        });
        drop(gate);
        self.notify_work(false);
    }

    /// Seals the active memtable and waits until every sealed memtable is flushed.
    ///
    /// # Errors
    /// The flush thread's error.
    pub fn flush_all(&self) -> Result<()> {
        self.check_writable()?;
        self.seal(true);
        self.wait_sealed_flushed()
    }

    /// Waits until every sealed memtable is flushed (the active one is left as it is).
    fn wait_sealed_flushed(&self) -> Result<()> {
        let mut g = self.stall_mu.lock();
        while !self.state().imm.is_empty() {
            self.check_bg()?;
            self.stall_cv.wait(&mut g);
        }
        self.check_bg()
    }

    /// Waits until every sealed memtable is flushed, then runs due compactions on the
    /// calling thread (one at a time with the compaction thread) until none is due. With
    /// writers still running it returns only once it catches up with them.
    ///
    /// # Errors
    /// The flush or compaction thread's error (also one raised while this ran);
    /// compaction errors.
    pub fn wait_for_compact(&self) -> Result<()> {
        self.check_writable()?;
        self.wait_sealed_flushed()?;
        while self.compact_once()? {}
        self.check_bg()
    }

    /// Flushes the oldest sealed memtable to a level-0 file; false when there is none.
    ///
    /// # Errors
    /// I/O errors writing the file or the manifest, purging the WAL.
    pub fn flush_oldest(&self) -> Result<bool> {
        let Some(mem) = self.state().imm.last().cloned() else {
            return Ok(false);
        };
        let start = Instant::now();
        let fs = &self.options.storage;
        let oldest = self.snapshots.oldest(|| self.visible());
        let meta = flush::write_l0(
            fs,
            &mem,
            &self.dir,
            self.alloc_id(),
            &self.options.sst,
            oldest,
        )?;
        let seg = self.open_output(SegmentInfo::from(&meta))?;
        self.upload(&[&seg])?;
        let up_to = mem.max_seqno();
        {
            let mut m = self.manifest.lock();
            m.append(&[
                Edit::NewSegment {
                    level: 0,
                    segment: seg.info.clone(),
                },
                Edit::WalObsolete { up_to },
            ])?;
            self.update_state(|s| {
                s.imm.retain(|x| !Arc::ptr_eq(x, &mem));
                s.version = Arc::new(s.version.with_l0(Arc::clone(&seg)));
            });
            self.maybe_rewrite_manifest(&mut m)?;
        }
        self.wal.purge_up_to(up_to)?;
        let c = &self.counters;
        c.flush_bytes.fetch_add(meta.file_size, Ordering::Relaxed);
        Counters::time(&c.flush_count, &c.flush_micros, start.elapsed());
        self.notify_stalled();
        self.request_compaction();
        Ok(true)
    }

    /// Opens a segment file this writer just wrote (a member of the cache, if there is
    /// one, which may not delete it before [`Core::upload`]).
    fn open_output(&self, info: SegmentInfo) -> Result<Arc<Segment>> {
        let (fs, sst) = (&self.options.storage, &self.options.sst);
        match &self.cache {
            Some(c) => Segment::cached(fs, &self.budgets, sst, &self.dir, info, c, false),
            None => Segment::open(fs, &self.budgets, sst, &self.dir, info).map(Arc::new),
        }
    }

    /// Uploads segment files `segs` to the object-storage tier, if there is one, before the
    /// manifest append that records them (which then does not upload them again).
    fn upload(&self, segs: &[&Arc<Segment>]) -> Result<()> {
        if let Some(u) = &self.uploader {
            for seg in segs {
                u.upload(&*self.options.storage, &self.dir, seg.info.id)?;
                seg.mark_uploaded();
            }
        }
        if let Some(c) = &self.cache {
            c.shrink();
        }
        Ok(())
    }

    /// Rewrites the manifest as a snapshot into a new file once it is over its size limit.
    fn maybe_rewrite_manifest(&self, m: &mut Manifest) -> Result<()> {
        if m.len() <= self.options.max_manifest_size {
            return Ok(());
        }
        self.rewrite_manifest_locked(m)
    }

    /// Replaces the manifest with a snapshot of the live state (`Db::purge`: the old edit
    /// log still names the key ranges of deleted files).
    ///
    /// # Errors
    /// I/O errors creating the new manifest or removing the old one.
    pub fn rewrite_manifest(&self) -> Result<()> {
        self.check_writable()?;
        self.rewrite_manifest_locked(&mut self.manifest.lock())
    }

    fn rewrite_manifest_locked(&self, m: &mut Manifest) -> Result<()> {
        let id = self.alloc_id();
        let mut state = m.state().clone();
        state.next_file_id = self.next_file_id.load(Ordering::Relaxed);
        // Obsolete files already unlinked need no record; those readers still hold do.
        let fs = &self.options.storage;
        state.obsolete.retain(|&id| {
            fs.file_len(&self.dir.join(memforest_sst::file_name(id)))
                .is_ok()
        });
        let old = m.path();
        let mut next = Manifest::create(&self.options.storage, &self.dir, id, state)?;
        let handed = m.hand_over(&mut next);
        *m = next;
        fs.remove_file(&old).map_err(Error::io("remove", &old))?;
        match handed {
            Err(e @ Error::Fenced { .. }) => Err(e),
            _ => Ok(()),
        }
    }

    /// Publishes the manifest to the object-storage tier if a publication is pending (see
    /// [`Manifest::append`]); nothing without one. A fenced writer records the error as a
    /// background error, so every later write fails.
    ///
    /// # Errors
    /// [`Error::Fenced`]; [`Error::Remote`].
    pub fn publish_remote(&self) -> Result<()> {
        let result = self.manifest.lock().publish_pending();
        if let Err(Error::Fenced { object, epoch }) = &result {
            self.set_bg_error(Error::Fenced {
                object: object.clone(),
                epoch: *epoch,
            });
        }
        result
    }

    /// Runs the most urgent compaction; false when none is due.
    ///
    /// # Errors
    /// Corruption of an input; I/O errors.
    pub fn compact_once(&self) -> Result<bool> {
        self.check_writable()?;
        let mut pointers = self.compaction_mu.lock();
        let st = self.state();
        let Some(task) = compaction::pick(&st.version, &self.options, &mut pointers) else {
            return Ok(false);
        };
        self.execute(&task)?;
        Ok(true)
    }

    /// Flushes everything, then merges every file into the deepest level.
    ///
    /// # Errors
    /// Flush or compaction errors.
    pub fn compact_all(&self) -> Result<()> {
        self.check_writable()?;
        self.flush_all()?;
        let _pointers = self.compaction_mu.lock();
        let st = self.state();
        if let Some(task) = compaction::pick_all(&st.version) {
            self.execute(&task)?;
        }
        Ok(())
    }

    /// Runs `task` and commits it unless its inputs changed meanwhile (then its outputs
    /// are deleted and the compaction is counted as declined).
    pub(crate) fn execute(&self, task: &CompactionTask) -> Result<()> {
        let start = Instant::now();
        let outputs = if task.trivial_move {
            task.inputs().cloned().collect()
        } else {
            let oldest = self.snapshots.oldest(|| self.visible());
            let persisted = self.manifest.lock().state().flushed_seqno;
            let tombstones = self.state().tombstones.up_to(persisted);
            let mut out = Outputs::default();
            let result = compaction::run(
                task,
                &self.dir,
                &self.options,
                oldest,
                &tombstones,
                || self.alloc_id(),
                &mut out,
            );
            let fs = &self.options.storage;
            let opened = result
                .and_then(|()| {
                    out.files
                        .iter()
                        .map(|m| self.open_output(SegmentInfo::from(m)))
                        .collect::<Result<Vec<_>>>()
                })
                .and_then(|segs| self.upload(&segs.iter().collect::<Vec<_>>()).map(|()| segs));
            match opened {
                Ok(segs) => {
                    self.counters
                        .compaction_bytes_read
                        .fetch_add(out.bytes_read, Ordering::Relaxed);
                    segs
                }
                Err(e) => {
                    for f in &out.files {
                        let _ = fs.remove_file(&f.path);
                    }
                    return Err(e);
                }
            }
        };
        let inputs = task.input_ids();
        let committed = {
            let mut m = self.manifest.lock();
            let current = self.state();
            let unchanged = inputs
                .iter()
                .all(|&id| current.version.level_of(id).is_some());
            if unchanged {
                let level = u8::try_from(task.output_level).unwrap_or(u8::MAX);
                m.append(&[Edit::Compaction {
                    inputs: inputs.clone(),
                    outputs: outputs.iter().map(|s| (level, s.info.clone())).collect(),
                }])?;
                self.update_state(|s| {
                    s.version = Arc::new(s.version.with_compaction(
                        &inputs,
                        task.output_level,
                        outputs.clone(),
                    ));
                });
                self.maybe_rewrite_manifest(&mut m)?;
            }
            unchanged
        };
        let c = &self.counters;
        if committed && !task.trivial_move {
            for seg in task.inputs() {
                seg.mark_obsolete();
            }
            let written: u64 = outputs.iter().map(|s| s.info.file_size).sum();
            c.compaction_bytes_written
                .fetch_add(written, Ordering::Relaxed);
        } else if !committed {
            c.compaction_declined.fetch_add(1, Ordering::Relaxed);
            if !task.trivial_move {
                outputs.iter().for_each(|s| s.mark_obsolete());
            }
        }
        if committed {
            Counters::time(&c.compaction_count, &c.compaction_micros, start.elapsed());
        }
        self.notify_stalled();
        Ok(())
    }

    /// A state and the latest published seqno that read consistently together without a
    /// registered snapshot: the state did not change while the seqno was read, so it holds
    /// every write and range tombstone at or below the seqno (both enter the state before
    /// their seqno is published), and every file in it was written under an oldest seqno at
    /// or below it, so no flush or compaction dropped a version the read needs (see
    /// [`crate::retention`]). When the state keeps changing (seals, flushes, compactions,
    /// range deletes racing the read), the seqno is pinned by a snapshot while the state is
    /// taken.
    pub fn latest(&self) -> (Arc<LsmState>, u64) {
        latest_of(|| self.state(), || self.visible()).unwrap_or_else(|| {
            let pin = self.snapshots.acquire(|| self.visible());
            (self.state(), pin.seqno())
        })
    }

    /// The newest value of engine key `key` at the latest published seqno (read as
    /// [`Core::latest`] says).
    ///
    /// # Errors
    /// Corruption of a segment file on the way.
    pub fn get_latest(&self, key: &[u8]) -> Result<Option<Bytes>> {
        let (st, seqno) = self.latest();
        Self::get_in(&st, key, seqno)
    }

    /// The newest value of engine key `key` at `snapshot` (a registered [`Snapshot`]'s
    /// seqno, which keeps the versions it sees).
    ///
    /// [`Snapshot`]: crate::snapshot::Snapshot
    ///
    /// # Errors
    /// Corruption of a segment file on the way.
    pub fn get(&self, key: &[u8], snapshot: u64) -> Result<Option<Bytes>> {
        Self::get_in(&self.state(), key, snapshot)
    }

    fn get_in(st: &LsmState, key: &[u8], snapshot: u64) -> Result<Option<Bytes>> {
        let mut found = st.active.get(key, snapshot);
        if found.is_none() {
            found = st.imm.iter().find_map(|m| m.get(key, snapshot));
        }
        if found.is_none() {
            found = st.version.get(key, snapshot)?;
        }
        Ok(match found {
            Some((seqno, Kind::Put, value)) if !st.tombstones.hides(key, seqno, snapshot) => {
                Some(value)
            }
            _ => None,
        })
    }

    /// Current statistics.
    pub fn stats(&self) -> Stats {
        let st = self.state();
        let mut s = Stats::default();
        self.counters.fill(&mut s);
        s.wal_bytes_written = self.wal.stats().bytes;
        s.levels = st
            .version
            .levels
            .iter()
            .map(|l| LevelStats {
                files: l.len(),
                bytes: l.iter().map(|x| x.info.file_size).sum(),
            })
            .collect();
        s.memtable_bytes = std::iter::once(&st.active)
            .chain(&st.imm)
            .map(|m| m.approximate_size() as u64)
            .sum();
        s.immutable_memtables = st.imm.len();
        s.wal_bytes = self
            .wal
            .segment_ids()
            .iter()
            .filter_map(|id| {
                let path = memforest_wal::segment::path(self.wal.dir(), *id);
                self.options.storage.file_len(&path).ok()
            })
            .sum();
        if s.user_bytes > 0 {
            let written = s.wal_bytes_written + s.flush_bytes_written + s.compaction_bytes_written;
            s.write_amplification = written as f64 / s.user_bytes as f64;
        }
        let total: u64 = s.levels.iter().map(|l| l.bytes).sum();
        if let Some(deepest) = s.levels.iter().rev().find(|l| l.bytes > 0) {
            s.space_amplification = total as f64 / deepest.bytes as f64;
        }
        s.range_tombstones = st.tombstones.len();
        s
    }
}

/// Why writers must wait in state `st`: too many sealed memtables wait for the flush
/// thread, or level 0 holds too many files.
fn stall_reason(st: &LsmState, options: &Options) -> Option<StallReason> {
    if st.imm.len() >= options.max_immutable_memtables {
        Some(StallReason::Memtables)
    } else if st.version.levels.first().map_or(0, Vec::len) >= options.l0_stop_writes_trigger {
        Some(StallReason::L0Files)
    } else {
        None
    }
}

/// The version one WAL entry stores, in a memtable and then in segment files.
#[derive(Debug)]
pub(crate) struct StoredVersion<'a> {
    /// The engine key (a range delete's reserved key, `range_del`).
    pub key: Cow<'a, [u8]>,
    /// Put or tombstone.
    pub kind: Kind,
    /// The value (empty for a tombstone).
    pub value: Cow<'a, [u8]>,
    /// The tombstone a range delete is.
    pub range: Option<RangeTombstone>,
}

/// The version WAL entry `e` stores at `seqno`: `Some(None)` for a no-op, `None` for an
/// unknown op code.
pub(crate) fn stored_version(e: &WalEntry, seqno: u64) -> Option<Option<StoredVersion<'_>>> {
    let (key, kind, value, range) = match Op::from_byte(e.kind)? {
        Op::Put => (
            Cow::from(&e.key[..]),
            Kind::Put,
            Cow::from(&e.value[..]),
            None,
        ),
        Op::Delete => (
            Cow::from(&e.key[..]),
            Kind::Tombstone,
            Cow::from(&[][..]),
            None,
        ),
        Op::Noop => return Some(None),
        Op::RangeDelete => {
            let t = RangeTombstone {
                start: Bytes::copy_from_slice(&e.key),
                end: Bytes::copy_from_slice(&e.value),
                seqno,
            };
            let (key, value) = (t.storage_key(), t.storage_value());
            (Cow::from(key), Kind::Put, Cow::from(value), Some(t))
        }
    };
    Some(Some(StoredVersion {
        key,
        kind,
        value,
        range,
    }))
}

/// Inserts one WAL entry into `mem` at `seqno`. Returns `None` for an unknown op code,
/// `Some(Some(t))` for a range delete.
pub fn apply_entry(mem: &MemTable, e: &WalEntry, seqno: u64) -> Option<Option<RangeTombstone>> {
    let Some(v) = stored_version(e, seqno)? else {
        return Some(None);
    };
    mem.insert(&v.key, seqno, v.kind, &v.value);
    Some(v.range)
}

/// Tries of [`latest_of`] before [`Core::latest`] registers a snapshot.
const LATEST_TRIES: usize = 4;

/// The lock-free path of [`Core::latest`]: a state read before and after the seqno, if the
/// two are the same state (an `Arc` still held cannot be reused by a newer state).
fn latest_of(
    state: impl Fn() -> Arc<LsmState>,
    visible: impl Fn() -> u64,
) -> Option<(Arc<LsmState>, u64)> {
    for _ in 0..LATEST_TRIES {
        let data = state();
        let seqno = visible();
        if Arc::ptr_eq(&data, &state()) {
            return Some((data, seqno));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn state_with(mem: &Arc<MemTable>, tombstones: RangeTombstones) -> Arc<LsmState> {
        Arc::new(LsmState {
            active: Arc::clone(mem),
            imm: Vec::new(),
            version: Arc::new(Version::empty(2)),
            tombstones,
        })
    }

    #[test]
    fn a_latest_read_never_pairs_a_seqno_with_a_state_that_changed_around_it() {
        let mem = Arc::new(MemTable::new());
        mem.insert(b"k", 5, Kind::Put, b"old");
        let before = state_with(&mem, RangeTombstones::default());
        // A seal and the batch `delete [k, l) @6, put k = new @7` in the new memtable,
        // published (7) between the reader's first state read and its seqno read.
        let sealed = Arc::new(MemTable::new());
        sealed.insert(b"k", 7, Kind::Put, b"new");
        let after = state_with(
            &sealed,
            RangeTombstones::default().with([RangeTombstone {
                start: Bytes::from_static(b"k"),
                end: Bytes::from_static(b"l"),
                seqno: 6,
            }]),
        );
        let calls = Cell::new(0);
        let state = || {
            calls.set(calls.get() + 1);
            if calls.get() == 1 {
                Arc::clone(&before)
            } else {
                Arc::clone(&after)
            }
        };
        let (st, seqno) = latest_of(state, || 7).unwrap();
        assert!(Arc::ptr_eq(&st, &after), "retried after the change");
        assert_eq!(
            Core::get_in(&st, b"k", seqno).unwrap().as_deref(),
            Some(&b"new"[..])
        );
        // Paired with the old data, the new tombstone would hide `old` and the read would
        // find nothing: a state that never existed.
        let torn = state_with(&mem, after.tombstones.clone());
        assert_eq!(Core::get_in(&torn, b"k", 7).unwrap(), None);
        let flip = Cell::new(false);
        let changing = || {
            flip.set(!flip.get());
            Arc::clone(if flip.get() { &before } else { &after })
        };
        assert!(
            latest_of(changing, || 7).is_none(),
            "a state that changes on every try falls back to a snapshot"
        );
    }
}
