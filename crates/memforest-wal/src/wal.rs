//! [`Wal`]: a directory of segments with group commit, rotation, purging and recovery.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memforest_io::Storage;
use parking_lot::Mutex;

use crate::batch::{self, WriteBatch};
use crate::error::{Result, WalError};
use crate::group_commit::{CommitQueue, Group};
use crate::ledger::SegmentLedger;
use crate::options::{Durability, WalOptions};
use crate::quarantine;
use crate::recovery::{self, RecoveredBatch, RecoveryReport, SegmentImage};
use crate::segment::{self, SegmentWriter};
use crate::segment_meta::SegmentMeta;
use crate::stats::WalStats;

/// What [`Wal::open`] recovered.
#[derive(Debug, Clone, Default)]
pub struct Recovered {
    /// Every recovered batch, in sequence-number order.
    pub batches: Vec<RecoveredBatch>,
    /// What was tolerated, skipped, truncated or deleted.
    pub report: RecoveryReport,
}

/// A closed (no longer written) segment and the last seqno written up to its end.
#[derive(Debug, Clone, Copy)]
struct Closed {
    id: u64,
    last_seqno: u64,
    /// Recovery skipped damage in it (`RecoveryMode::SkipAnyCorrupted`): a purge sets it
    /// aside instead of deleting it.
    damaged: bool,
}

/// The segment being written, behind the I/O lock.
#[derive(Debug)]
struct Active {
    /// `None` for a log opened read-only ([`Wal::open_read_only`]).
    writer: Option<SegmentWriter>,
    id: u64,
    closed: VecDeque<Closed>,
    /// Last seqno written to the file (not necessarily synced).
    last_written: u64,
    /// Counters since open, kept under the I/O lock every counted step already holds.
    stats: WalStats,
}

impl Active {
    /// The segment writer; [`WalError::ReadOnly`] for a log opened read-only.
    fn writer(&mut self) -> Result<&mut SegmentWriter> {
        self.writer.as_mut().ok_or(WalError::ReadOnly)
    }
}

/// How [`Wal::open_inner`] opens the log.
enum Access {
    /// For appending, with an optional ledger.
    Write(Option<Arc<dyn SegmentLedger>>),
    /// Recovery in memory only, with an optional ledger to read synced lengths from.
    ReadOnly(Option<Arc<dyn SegmentLedger>>),
}

/// The write-ahead log: a directory of `{id:020}.wal` segment files.
///
/// `Wal` is `Send + Sync`; share it (e.g. in an `Arc`) between appending threads. Batches
/// get dense, increasing sequence numbers: a batch of `n` entries owns `n` seqnos, an empty
/// batch owns one. Only one `Wal` may use a directory at a time (the engine holds the lock).
#[derive(Debug)]
pub struct Wal {
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    options: WalOptions,
    queue: CommitQueue,
    active: Mutex<Active>,
    last_seqno: AtomicU64,
    /// Told of every segment created, sealed or deleted, before the change is relied on.
    ledger: Option<Arc<dyn SegmentLedger>>,
    /// Opened by [`Wal::open_read_only`]: every change is refused.
    read_only: bool,
    /// Test seam: the next data sync fails as if the disk had reported an error.
    #[cfg(test)]
    pub(crate) fail_next_sync: std::sync::atomic::AtomicBool,
}

impl Wal {
    /// Opens (or creates) the log in `dir`, recovers it under `options.recovery_mode`, and
    /// makes it ready for appending: the last segment is truncated to the end of its last
    /// valid record and synced (one holding damage `SkipAnyCorrupted` skipped is kept
    /// whole instead, and appending goes on in a new segment), segments past a
    /// point-in-time stop are set aside, and the directory is synced, all before this
    /// returns.
    ///
    /// # Errors
    /// [`WalError::Corruption`] when the mode does not tolerate what it found (naming
    /// segment and offset); [`WalError::Io`] with the path on any I/O failure;
    /// [`WalError::InvalidOptions`] for a zero segment size.
    pub fn open(dir: impl AsRef<Path>, options: WalOptions) -> Result<(Self, Recovered)> {
        Self::open_with(memforest_io::default_storage(), dir, options)
    }

    /// [`Wal::open`] doing every file operation through `storage` (the real filesystem
    /// for `open`; a fault-injecting one in tests).
    ///
    /// # Errors
    /// As [`Wal::open`].
    pub fn open_with(
        storage: Arc<dyn Storage>,
        dir: impl AsRef<Path>,
        options: WalOptions,
    ) -> Result<(Self, Recovered)> {
        Self::open_inner(storage, dir.as_ref(), options, Access::Write(None))
    }

    /// [`Wal::open_with`] telling `ledger` of every segment the log creates, seals or
    /// deletes, before the change is relied on: a created segment is reported before its
    /// first batch is written, a deletion before the file is unlinked (RocksDB's
    /// `track_and_verify_wals_in_manifest`). A failed report fails the step that made it.
    ///
    /// # Errors
    /// As [`Wal::open`], and the ledger's error when opening creates a segment.
    pub fn open_tracked(
        storage: Arc<dyn Storage>,
        dir: impl AsRef<Path>,
        options: WalOptions,
        ledger: Arc<dyn SegmentLedger>,
    ) -> Result<(Self, Recovered)> {
        Self::open_inner(storage, dir.as_ref(), options, Access::Write(Some(ledger)))
    }

    /// Recovers the log in `dir` under `options.recovery_mode` without changing anything:
    /// no directory is created, no segment is cut, deleted or created. A missing
    /// directory is an empty log. The returned log refuses every append, sync, rotation
    /// and purge with [`WalError::ReadOnly`]; its [`Wal::segment_ids`] are the segments
    /// recovery kept. Safe beside a process appending to the same log: a group being
    /// written at the end of the last segment is a torn tail, tolerated by the default
    /// mode.
    ///
    /// # Errors
    /// As [`Wal::open`], except that nothing is written.
    pub fn open_read_only(
        storage: Arc<dyn Storage>,
        dir: impl AsRef<Path>,
        options: WalOptions,
    ) -> Result<(Self, Recovered)> {
        Self::open_inner(storage, dir.as_ref(), options, Access::ReadOnly(None))
    }

    /// [`Wal::open_read_only`] with `ledger`'s synced lengths
    /// ([`SegmentLedger::synced_len`]): damage before a segment's synced length is refused
    /// as it is by [`Wal::open_tracked`]. The ledger is told of nothing.
    ///
    /// # Errors
    /// As [`Wal::open_read_only`].
    pub fn open_read_only_tracked(
        storage: Arc<dyn Storage>,
        dir: impl AsRef<Path>,
        options: WalOptions,
        ledger: Arc<dyn SegmentLedger>,
    ) -> Result<(Self, Recovered)> {
        Self::open_inner(
            storage,
            dir.as_ref(),
            options,
            Access::ReadOnly(Some(ledger)),
        )
    }

    fn open_inner(
        storage: Arc<dyn Storage>,
        dir: &Path,
        options: WalOptions,
        access: Access,
    ) -> Result<(Self, Recovered)> {
        if options.segment_size == 0 {
            return Err(WalError::InvalidOptions("segment_size must be > 0"));
        }
        let dir = dir.to_path_buf();
        let fs = &*storage;
        let (read_only, ledger) = match access {
            Access::Write(ledger) => (false, ledger),
            Access::ReadOnly(ledger) => (true, ledger),
        };
        if !read_only {
            fs.create_dir_all(&dir).map_err(|e| WalError::io(&dir, e))?;
        }
        let ids = match segment::list(fs, &dir) {
            Err(WalError::Io { source, .. })
                if read_only && source.kind() == std::io::ErrorKind::NotFound =>
            {
                Vec::new()
            }
            other => other?,
        };
        let mut files = Vec::with_capacity(ids.len());
        for &id in &ids {
            let path = segment::path(&dir, id);
            files.push(fs.read(&path).map_err(|e| WalError::io(&path, e))?);
        }
        let images: Vec<SegmentImage<'_>> = ids
            .iter()
            .zip(&files)
            .map(|(&id, bytes)| SegmentImage { id, bytes })
            .collect();
        let synced = |id| ledger.as_ref().and_then(|l| l.synced_len(id));
        let lost = |first, last| ledger.as_ref().is_some_and(|l| l.lost(first, last));
        let plan = recovery::plan(&images, options.recovery_mode, &synced, &lost)?;
        drop(files);

        let mut stats = WalStats::default();
        let damaged = plan.damaged_segments();
        let (writer, id) = if read_only {
            (None, plan.kept.last().map_or(0, |k| k.id))
        } else {
            let deleted = &plan.report.deleted_segments;
            if let (Some(l), false) = (&ledger, deleted.is_empty()) {
                l.deleting(deleted).map_err(|e| WalError::io(&dir, e))?;
            }
            // Newest first, so a crash part-way leaves a contiguous log. Only an empty or
            // all-zero file is provably garbage; the others may hold writes a later salvage
            // wants.
            for &id in deleted.iter().rev() {
                let path = segment::path(&dir, id);
                if plan.report.set_aside.contains(&id) {
                    quarantine::set_aside(fs, &dir, id)?;
                } else {
                    fs.remove_file(&path).map_err(|e| WalError::io(&path, e))?;
                }
            }
            if !deleted.is_empty() {
                segment::sync_dir(fs, &dir)?;
            }
            match plan.kept.last() {
                Some(last) if !damaged.contains(&last.id) => {
                    if let Some(l) = &ledger {
                        Self::record_cut(&**l, &dir, last.id, last.valid_len)?;
                    }
                    (
                        Some(segment::reopen(fs, &dir, last.id, last.valid_len)?),
                        last.id,
                    )
                }
                // Damage a salvage skipped is never cut off, nor appended after: the last
                // segment is closed as it is (a purge sets it aside once its batches are
                // flushed) and the log goes on in a new one.
                kept => {
                    let tracked = ledger.as_ref().and_then(|l| l.last_tracked());
                    let id = match ids.last().copied().max(tracked) {
                        Some(max) => segment::next_id(&dir, max)?,
                        None => 1,
                    };
                    let meta = SegmentMeta {
                        segment_id: id,
                        predecessor_id: kept.map_or(0, |k| k.id),
                        predecessor_last_seqno: plan.last_seqno,
                    };
                    stats.segments_created += 1;
                    let writer = segment::create(fs, &dir, &meta)?;
                    if let Some(l) = &ledger {
                        l.created(id, kept.map(|k| (k.id, k.file_len)))
                            .map_err(|e| WalError::io(&dir, e))?;
                    }
                    (Some(writer), id)
                }
            }
        };
        let closed = plan
            .kept
            .iter()
            .filter(|k| k.id != id)
            .map(|k| Closed {
                id: k.id,
                last_seqno: k.last_seqno,
                damaged: damaged.contains(&k.id),
            })
            .collect();
        let wal = Self {
            storage,
            dir,
            options,
            queue: CommitQueue::new(plan.last_seqno + 1),
            active: Mutex::new(Active {
                writer,
                id,
                closed,
                last_written: plan.last_seqno,
                stats,
            }),
            last_seqno: AtomicU64::new(plan.last_seqno),
            ledger,
            read_only,
            #[cfg(test)]
            fail_next_sync: std::sync::atomic::AtomicBool::new(false),
        };
        let recovered = Recovered {
            batches: plan.batches,
            report: plan.report,
        };
        Ok((wal, recovered))
    }

    /// Before recovery cuts segment `id` to `valid_len`: tells the ledger the new length if
    /// it is below the recorded synced one (only a salvage mode gets here; the others
    /// refuse such a segment).
    fn record_cut(ledger: &dyn SegmentLedger, dir: &Path, id: u64, valid_len: u64) -> Result<()> {
        if ledger.synced_len(id).is_some_and(|len| len > valid_len) {
            ledger
                .truncated(id, valid_len)
                .map_err(|e| WalError::io(segment::path(dir, id), e))?;
        }
        Ok(())
    }

    /// Appends `batch` and returns its first sequence number once it is written at
    /// `durability` (or stronger: it may share a sync with other appenders).
    ///
    /// Compression happens before joining the group, encoding into the queue's reused
    /// buffer when joining it; the group's leader writes all queued batches with one
    /// `write` and issues at most one `fdatasync`/`fsync`.
    ///
    /// # Errors
    /// [`WalError::BatchTooLarge`]; [`WalError::Poisoned`] when this group's or an earlier
    /// write or sync failed (the batch was not acknowledged; the failing group is cut back
    /// off the segment, so it is not in the log after a reopen).
    pub fn append(&self, batch: &WriteBatch, durability: Durability) -> Result<u64> {
        self.check_writable()?;
        let prepared = batch::Prepared::new(batch, self.options.compression)?;
        self.queue
            .submit(&prepared, batch.seqno_span(), durability, |group| {
                self.write_group(group)
            })
    }

    /// Makes every batch whose `append` has returned durable (`fdatasync` of the active
    /// segment; closed segments were synced when they were closed).
    ///
    /// # Errors
    /// [`WalError::Poisoned`] if the log is or becomes poisoned (a failed sync poisons it).
    pub fn sync(&self) -> Result<()> {
        self.check_writable()?;
        let mut active = self.active.lock();
        self.sync_active(&mut active, Durability::SyncData)
            .map_err(|e| self.queue.poison(e))
    }

    /// Syncs the active segment ([`Wal::sync`]) and tells the ledger its synced length
    /// ([`SegmentLedger::closed`]), so a later recovery refuses damage before it instead of
    /// cutting it as a torn tail. The ledger is not told when it already records that
    /// length ([`SegmentLedger::synced_len`]: nothing was written since), so closing a log
    /// that wrote nothing writes nothing and needs no free space. For a clean shutdown; the
    /// log stays usable.
    ///
    /// # Errors
    /// As [`Wal::sync`]; the ledger's error.
    pub fn close(&self) -> Result<()> {
        self.check_writable()?;
        let mut active = self.active.lock();
        self.sync_active(&mut active, Durability::SyncData)
            .map_err(|e| self.queue.poison(e))?;
        if let Some(l) = &self.ledger {
            let len = active.writer()?.len();
            if l.synced_len(active.id) == Some(len) {
                return Ok(());
            }
            l.closed(active.id, len)
                .map_err(|e| WalError::io(segment::path(&self.dir, active.id), e))?;
        }
        Ok(())
    }

    /// Closes the active segment (synced) and starts a new one, whatever its size.
    ///
    /// # Errors
    /// [`WalError::Poisoned`] if the log is or becomes poisoned.
    pub fn rotate(&self) -> Result<()> {
        self.check_writable()?;
        let mut active = self.active.lock();
        self.rotate_locked(&mut active)
            .map_err(|e| self.queue.poison(e))
    }

    /// Deletes the oldest closed segments whose batches all have seqnos `<= seqno` (their
    /// data is persisted elsewhere), oldest first, then syncs the directory. The active
    /// segment is never deleted. A segment in which recovery skipped damage
    /// (`RecoveryMode::SkipAnyCorrupted`) is set aside as `{id:020}.wal.quarantine`
    /// ([`crate::quarantine`]) instead: its damaged bytes are not proven garbage. The ledger
    /// (if any) is told before anything is unlinked or renamed. Returns the number of
    /// segments deleted or set aside.
    ///
    /// # Errors
    /// [`WalError::ReadOnly`]; the ledger's error (nothing is deleted then);
    /// [`WalError::Io`] when a deletion or the directory sync fails. The log stays usable;
    /// a segment whose deletion failed is no longer tracked and is recovered (and can be
    /// purged again) at the next open.
    pub fn purge_up_to(&self, seqno: u64) -> Result<usize> {
        if self.read_only {
            return Err(WalError::ReadOnly);
        }
        // Unlink outside the I/O lock, so group commits are not held up by the deletions.
        let purged: Vec<Closed> = {
            let mut active = self.active.lock();
            let n = active
                .closed
                .iter()
                .take_while(|c| c.last_seqno <= seqno)
                .count();
            active.closed.drain(..n).collect()
        };
        if let (Some(l), false) = (&self.ledger, purged.is_empty()) {
            let ids: Vec<u64> = purged.iter().map(|c| c.id).collect();
            l.deleting(&ids).map_err(|e| WalError::io(&self.dir, e))?;
        }
        for c in &purged {
            if c.damaged {
                quarantine::set_aside(&*self.storage, &self.dir, c.id)?;
                continue;
            }
            let path = segment::path(&self.dir, c.id);
            self.storage
                .remove_file(&path)
                .map_err(|e| WalError::io(&path, e))?;
        }
        if !purged.is_empty() {
            segment::sync_dir(&*self.storage, &self.dir)?;
        }
        Ok(purged.len())
    }

    /// The last sequence number written to the log (recovered, or assigned to a batch
    /// whose group has been written; 0 for an empty log).
    #[must_use]
    pub fn last_seqno(&self) -> u64 {
        self.last_seqno.load(Ordering::Acquire)
    }

    /// Ids of the segment files the log currently uses, oldest first (the last is active).
    #[must_use]
    pub fn segment_ids(&self) -> Vec<u64> {
        let active = self.active.lock();
        active
            .closed
            .iter()
            .map(|c| c.id)
            .chain([active.id])
            .collect()
    }

    /// Counters since open.
    #[must_use]
    pub fn stats(&self) -> WalStats {
        self.active.lock().stats
    }

    /// The directory of segment files.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Refuses a change to a log opened read-only or poisoned.
    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(WalError::ReadOnly);
        }
        match self.queue.poisoned() {
            Some(cause) => Err(WalError::Poisoned(cause)),
            None => Ok(()),
        }
    }

    /// The leader's work: one buffered write of the whole group, then at most one sync.
    /// If either fails, the segment is abandoned and cut back to where the group started,
    /// so the group is not visible after a reopen.
    fn write_group(&self, group: &Group) -> Result<()> {
        let mut active = self.active.lock();
        if active.writer()?.len() >= self.options.segment_size {
            self.rotate_locked(&mut active)?;
        }
        let before = active.writer()?.len();
        let written = self.write_locked(&mut active, group, before);
        if written.is_err() {
            if let Some(writer) = active.writer.as_mut() {
                segment::abandon(writer, before);
            }
        }
        written
    }

    fn write_locked(&self, active: &mut Active, group: &Group, before: u64) -> Result<()> {
        let mut durability = Durability::Buffered;
        let mut last = active.last_written;
        // The path is built only on failure: formatting it costs more than the write.
        let id = active.id;
        let io = |e| WalError::io(segment::path(&self.dir, id), e);
        let writer = active.writer()?;
        for (payload, pending) in group.batches() {
            writer.add_record(payload).map_err(io)?;
            durability = durability.max(pending.durability);
            last = pending.last_seqno;
        }
        writer.get_mut().flush().map_err(io)?;
        let written = writer.len() - before;
        active.last_written = last;
        let stats = &mut active.stats;
        stats.batches += group.len() as u64;
        stats.groups += 1;
        stats.bytes += written;
        if durability > Durability::Buffered {
            self.sync_active(active, durability)?;
        }
        self.last_seqno.store(last, Ordering::Release);
        Ok(())
    }

    /// Flushes and syncs the active segment at `durability` (`SyncData` or `SyncAll`).
    fn sync_active(&self, active: &mut Active, durability: Durability) -> Result<()> {
        let id = active.id;
        let io = |e| WalError::io(segment::path(&self.dir, id), e);
        let writer = active.writer()?;
        writer.get_mut().flush().map_err(io)?;
        #[cfg(test)]
        if self.fail_next_sync.swap(false, Ordering::SeqCst) {
            return Err(io(std::io::Error::other("injected fsync failure")));
        }
        let file = writer.get_ref().get_ref().file();
        match durability {
            Durability::SyncAll => file.sync_all(),
            _ => file.sync_data(),
        }
        .map_err(io)?;
        active.stats.syncs += 1;
        Ok(())
    }

    /// Syncs and closes the active segment, then creates (and syncs) its successor.
    ///
    /// Runs under the I/O lock but not the queue lock: appenders keep queueing meanwhile
    /// and are written as one group afterwards.
    fn rotate_locked(&self, active: &mut Active) -> Result<()> {
        self.sync_active(active, Durability::SyncData)?;
        let meta = SegmentMeta {
            segment_id: segment::next_id(&self.dir, active.id)?,
            predecessor_id: active.id,
            predecessor_last_seqno: active.last_written,
        };
        let writer = segment::create(&*self.storage, &self.dir, &meta)?;
        active.stats.segments_created += 1;
        if let Some(l) = &self.ledger {
            let sealed_len = active.writer()?.len();
            l.created(meta.segment_id, Some((active.id, sealed_len)))
                .map_err(|e| WalError::io(&self.dir, e))?;
        }
        let closed = Closed {
            id: active.id,
            last_seqno: active.last_written,
            damaged: false,
        };
        active.closed.push_back(closed);
        active.writer = Some(writer);
        active.id = meta.segment_id;
        Ok(())
    }
}
