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
use crate::options::{Durability, WalOptions};
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
}

/// The segment being written, behind the I/O lock.
#[derive(Debug)]
struct Active {
    writer: SegmentWriter,
    id: u64,
    closed: VecDeque<Closed>,
    /// Last seqno written to the file (not necessarily synced).
    last_written: u64,
    /// Counters since open, kept under the I/O lock every counted step already holds.
    stats: WalStats,
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
    /// Test seam: the next data sync fails as if the disk had reported an error.
    #[cfg(test)]
    pub(crate) fail_next_sync: std::sync::atomic::AtomicBool,
}

impl Wal {
    /// Opens (or creates) the log in `dir`, recovers it under `options.recovery_mode`, and
    /// makes it ready for appending: the last segment is truncated to the end of its last
    /// valid record and synced, segments past a point-in-time stop are deleted, and the
    /// directory is synced, all before this returns.
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
        if options.segment_size == 0 {
            return Err(WalError::InvalidOptions("segment_size must be > 0"));
        }
        let dir = dir.as_ref().to_path_buf();
        let fs = &*storage;
        fs.create_dir_all(&dir).map_err(|e| WalError::io(&dir, e))?;
        let ids = segment::list(fs, &dir)?;
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
        let plan = recovery::plan(&images, options.recovery_mode)?;
        drop(files);

        // Newest first, so a crash part-way leaves a contiguous log.
        for &id in plan.report.deleted_segments.iter().rev() {
            let path = segment::path(&dir, id);
            fs.remove_file(&path).map_err(|e| WalError::io(&path, e))?;
        }
        if !plan.report.deleted_segments.is_empty() {
            segment::sync_dir(fs, &dir)?;
        }
        let mut stats = WalStats::default();
        let (writer, id) = match plan.kept.last() {
            Some(last) => (segment::reopen(fs, &dir, last.id, last.valid_len)?, last.id),
            None => {
                let id = ids.last().map_or(1, |&max| max + 1);
                let meta = SegmentMeta {
                    segment_id: id,
                    predecessor_id: 0,
                    predecessor_last_seqno: plan.last_seqno,
                };
                stats.segments_created += 1;
                (segment::create(fs, &dir, &meta)?, id)
            }
        };
        let closed = plan
            .kept
            .iter()
            .filter(|k| k.id != id)
            .map(|k| Closed {
                id: k.id,
                last_seqno: k.last_seqno,
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
            #[cfg(test)]
            fail_next_sync: std::sync::atomic::AtomicBool::new(false),
        };
        let recovered = Recovered {
            batches: plan.batches,
            report: plan.report,
        };
        Ok((wal, recovered))
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
        self.check_poisoned()?;
        let mut active = self.active.lock();
        self.sync_active(&mut active, Durability::SyncData)
            .map_err(|e| self.queue.poison(e))
    }

    /// Closes the active segment (synced) and starts a new one, whatever its size.
    ///
    /// # Errors
    /// [`WalError::Poisoned`] if the log is or becomes poisoned.
    pub fn rotate(&self) -> Result<()> {
        self.check_poisoned()?;
        let mut active = self.active.lock();
        self.rotate_locked(&mut active)
            .map_err(|e| self.queue.poison(e))
    }

    /// Deletes the oldest closed segments whose batches all have seqnos `<= seqno` (their
    /// data is persisted elsewhere), oldest first, then syncs the directory. The active
    /// segment is never deleted. Returns the number of segments deleted.
    ///
    /// # Errors
    /// [`WalError::Io`] when a deletion or the directory sync fails. The log stays usable;
    /// a segment whose deletion failed is no longer tracked and is recovered (and can be
    /// purged again) at the next open.
    pub fn purge_up_to(&self, seqno: u64) -> Result<usize> {
        // Unlink outside the I/O lock, so group commits are not held up by the deletions.
        let purged: Vec<u64> = {
            let mut active = self.active.lock();
            let n = active
                .closed
                .iter()
                .take_while(|c| c.last_seqno <= seqno)
                .count();
            active.closed.drain(..n).map(|c| c.id).collect()
        };
        for &id in &purged {
            let path = segment::path(&self.dir, id);
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

    fn check_poisoned(&self) -> Result<()> {
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
        if active.writer.len() >= self.options.segment_size {
            self.rotate_locked(&mut active)?;
        }
        let before = active.writer.len();
        let written = self.write_locked(&mut active, group, before);
        if written.is_err() {
            segment::abandon(&mut active.writer, before);
        }
        written
    }

    fn write_locked(&self, active: &mut Active, group: &Group, before: u64) -> Result<()> {
        let mut durability = Durability::Buffered;
        let mut last = active.last_written;
        // The path is built only on failure: formatting it costs more than the write.
        let id = active.id;
        let io = |e| WalError::io(segment::path(&self.dir, id), e);
        for (payload, pending) in group.batches() {
            active.writer.add_record(payload).map_err(io)?;
            durability = durability.max(pending.durability);
            last = pending.last_seqno;
        }
        active.writer.get_mut().flush().map_err(io)?;
        active.last_written = last;
        let written = active.writer.len() - before;
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
        active.writer.get_mut().flush().map_err(io)?;
        #[cfg(test)]
        if self.fail_next_sync.swap(false, Ordering::SeqCst) {
            return Err(io(std::io::Error::other("injected fsync failure")));
        }
        let file = active.writer.get_ref().get_ref().file();
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
            segment_id: active.id + 1,
            predecessor_id: active.id,
            predecessor_last_seqno: active.last_written,
        };
        let writer = segment::create(&*self.storage, &self.dir, &meta)?;
        active.stats.segments_created += 1;
        let closed = Closed {
            id: active.id,
            last_seqno: active.last_written,
        };
        active.closed.push_back(closed);
        active.writer = writer;
        active.id = meta.segment_id;
        Ok(())
    }
}
