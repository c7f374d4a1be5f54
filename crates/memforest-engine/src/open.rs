//! Opening a database directory, read-write or read-only: `CURRENT` -> manifest -> segment
//! files, the WAL checked against the manifest and replayed, the unlisted files surveyed
//! ([`crate::orphans`]), and what was found gathered in an [`OpenReport`].
//!
//! A read-write open creates a new store only in an empty directory (or one left by a
//! creation that never reached `CURRENT`); a read-only open changes nothing at all.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use memforest_io::Storage;
use memforest_sst::{BoxedSource, MergeIterator, ScanOptions};
use memforest_wal::format::RecordType;
use memforest_wal::{Durability, Wal, WalOptions};
use parking_lot::Mutex;
use serde::Serialize;

use crate::batch::Op;
use crate::cache::SegmentCache;
use crate::core::{apply_entry, LsmState};
use crate::error::{Error, Result};
use crate::lock::LOCK_FILE;
use crate::manifest::{self, Edit, Manifest, ManifestState};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::orphans::{self, Fate, Live};
use crate::range_del::{self, RangeTombstones};
use crate::remote::{self, Publisher};
use crate::version::{Segment, SegmentInfo, Version};
use crate::wal_damage::{self, WalDamage};
use crate::wal_tracking::{self, Lost, ManifestLedger};

/// Name of the WAL directory inside the database directory.
pub const WAL_DIR: &str = "wal";

/// Read-write (the lock is held) or read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Recovery may cut, delete, quarantine and write.
    ReadWrite,
    /// Recovery reads only.
    ReadOnly,
}

/// One unlisted file an open found, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnlistedFile {
    /// File name in the database directory (before any `.quarantine` suffix).
    pub name: String,
    /// True when it was deleted as garbage (a read-only open only says it would be);
    /// false when it was (or would be) quarantined.
    pub garbage: bool,
    /// Why.
    pub reason: String,
}

/// What an open found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OpenReport {
    /// Segment files set aside as damage, this open or an earlier one: the names in the
    /// directory ending in [`crate::QUARANTINE_SUFFIX`], plus (read-only) the files a
    /// read-write open would set aside.
    pub quarantined: Vec<String>,
    /// Unlisted files this open deleted or quarantined (a read-only open: would have).
    pub unlisted: Vec<UnlistedFile>,
    /// Byte offset of a damaged last manifest record that was dropped as a torn append.
    pub manifest_torn_tail: Option<u64>,
    /// WAL segments the manifest tracks that were missing or short, accepted under
    /// `RecoveryMode::SkipAnyCorrupted` (any other mode refuses to open).
    pub wal_missing: Vec<u64>,
    /// WAL segment files that recovery set aside, this open or an earlier one (names in
    /// the `wal/` directory, `{id:020}.wal.quarantine` or, when the same segment id was
    /// set aside before, `{id:020}.wal.quarantine.{n}`): a last segment holding no valid
    /// record or segments past the recovery point (`RecoveryMode::PointInTime`), never
    /// read again and never deleted. A read-only open, which renames nothing, also lists
    /// the segment files (`{id:020}.wal`) a read-write open would set aside, under the
    /// name they have now.
    pub wal_quarantined: Vec<String>,
    /// Damaged WAL regions this open read past (`RecoveryMode::SkipAnyCorrupted`) or
    /// stopped at (`RecoveryMode::PointInTime`), with the writes each gap after one lost
    /// ([`WalDamage::lost`]). The other modes refuse to open instead. A read-write open
    /// keeps a segment whose own bytes hold the damage whole (appending to a new one); the
    /// purge after its writes are flushed sets it aside instead of deleting it (a flush,
    /// [`crate::Db::purge`], or [`crate::Db::repair`], which purges itself). Damage that
    /// only shows in a segment (a predecessor mismatch in its metadata, a gap before its
    /// first batch) leaves that segment as it is.
    pub wal_skipped: Vec<WalDamage>,
    /// `(segment id, byte offset)` of a damaged last WAL record cut off as a torn write
    /// (a crash during an append whose sync had not returned). Not damage: damage before
    /// a segment's synced length (sealed, or at a clean close) refuses to open instead.
    pub wal_torn_tail: Option<(u64, u64)>,
}

impl OpenReport {
    /// True when data may be missing from what the store serves: a quarantined segment
    /// file or an accepted WAL loss (a missing segment, a segment set aside, damage read
    /// past). A torn manifest tail alone is not damage: what its record described is
    /// either proven redundant or quarantined.
    #[must_use]
    pub fn is_damaged(&self) -> bool {
        !self.quarantined.is_empty()
            || !self.wal_missing.is_empty()
            || !self.wal_quarantined.is_empty()
            || !self.wal_skipped.is_empty()
    }
}

/// Everything a `Core` is built from.
pub(crate) struct Recovered {
    pub manifest: Arc<Mutex<Manifest>>,
    pub wal: Wal,
    pub state: LsmState,
    pub next_file_id: u64,
    pub budgets: memforest_sst::ReadBudgets,
    pub cache: Option<Arc<SegmentCache>>,
    pub report: OpenReport,
}

/// Refuses an empty directory path before anything is read or written: `""` names no
/// directory, yet file calls resolve the names joined to it (`CURRENT`, `LOCK`) in the
/// process's current directory, and listing it fails with `NotFound`, which would read as an
/// empty directory and let a new store be created among whatever files are there.
///
/// # Errors
/// [`Error::InvalidArgument`] for an empty path.
pub(crate) fn check_dir_path(dir: &Path) -> Result<()> {
    if dir.as_os_str().is_empty() {
        return Err(Error::InvalidArgument(
            "the store directory path is empty (name a directory; \".\" is the current one)",
        ));
    }
    Ok(())
}

/// Recovers the store in `dir`. Read-write: the caller holds the lock and the directory
/// exists.
///
/// # Errors
/// [`Error::NotAStore`]; damage the recovery mode refuses (manifest, segment files, WAL,
/// missing WAL segments); I/O errors.
pub(crate) fn recover(dir: &Path, options: &Options, access: Access) -> Result<Recovered> {
    let storage = &options.storage;
    let fs = &**storage;
    let remote = options
        .remote
        .as_ref()
        .filter(|_| access == Access::ReadWrite);
    let newest = match remote {
        Some(r) => remote::newest(r)?,
        None if access == Access::ReadWrite => {
            crate::remote_binding::refuse_without_location(fs, dir)?;
            None
        }
        None => None,
    };
    let mut manifest = match Manifest::load(storage, dir)? {
        Some(m) => m,
        None if access == Access::ReadWrite => {
            create_store(storage, dir, newest.as_ref().map(|(_, s)| s))?
        }
        None => {
            return Err(Error::NotAStore {
                path: dir.to_path_buf(),
                found: entries(fs, dir).unwrap_or_default(),
            })
        }
    };
    // Ids past every stored segment object (none of this writer's uploads meets one), in
    // the span its claim reserves (a writer it fences keeps below it).
    let mut free_file_id = match remote {
        Some(r) => remote::free_file_id(r)?,
        None => 0,
    };
    if let Some(r) = remote {
        let theirs = newest.as_ref().map(|(n, s)| (*n, s));
        let claimed = Publisher::claim(Arc::clone(r), storage, dir, manifest.state(), theirs)?;
        free_file_id = free_file_id.max(claimed.id_span_start());
        manifest.attach(claimed);
    }
    let current = manifest.id();
    let mstate = manifest.state().clone();
    let mut report = OpenReport {
        manifest_torn_tail: manifest.dropped_tail(),
        ..OpenReport::default()
    };
    let budgets = memforest_sst::ReadBudgets {
        residency: memforest_sst::Residency::new(options.segment_resident_bytes),
        descriptors: Arc::clone(memforest_sst::DescriptorTable::shared()),
    };
    let cache = options
        .remote
        .as_ref()
        .zip(options.remote_cache_bytes)
        .map(|(r, bound)| SegmentCache::new(Arc::clone(r), bound));
    let version = open_segments(storage, &budgets, cache.as_ref(), options, dir, &mstate)?;
    let wal_dir = dir.join(WAL_DIR);
    let lost = if mstate.wal_tracked {
        wal_tracking::check(fs, &wal_dir, &mstate, options.recovery_mode)?
    } else {
        Vec::new()
    };
    report.wal_missing = lost.iter().map(|l| l.id).collect();
    let manifest = Arc::new(Mutex::new(manifest));
    let wal_options = wal_options(options);
    let wal_storage = Arc::clone(storage);
    let ledger = Arc::new(ManifestLedger(Arc::clone(&manifest)));
    let (wal, recovered) = match access {
        Access::ReadWrite => Wal::open_tracked(wal_storage, &wal_dir, wal_options, ledger)?,
        Access::ReadOnly => {
            Wal::open_read_only_tracked(wal_storage, &wal_dir, wal_options, ledger)?
        }
    };
    report.wal_torn_tail = recovered
        .report
        .tolerated_tail
        .as_ref()
        .map(|d| (d.segment, d.offset));
    report.wal_skipped = wal_damage::of(&recovered, mstate.flushed_seqno);
    report.wal_quarantined = wal_set_aside(fs, &wal_dir)?;
    if access == Access::ReadOnly {
        // Named as they are now: the next read-write open sets them aside.
        let set_aside = recovered.report.set_aside.iter();
        report
            .wal_quarantined
            .extend(set_aside.map(|&id| memforest_wal::segment::file_name(id)));
    }
    report.wal_quarantined.sort();
    if access == Access::ReadWrite {
        track_wal(&manifest, &wal, &lost, recovered.report.truncated)?;
        pad_wal_seqno(&wal, mstate.flushed_seqno)?;
    }
    let mem = MemTable::new();
    for b in &recovered.batches {
        for (seqno, e) in (b.first_seqno..).zip(b.batch.entries()) {
            if seqno > mstate.flushed_seqno && apply_entry(&mem, e, seqno).is_none() {
                let path = memforest_wal::segment::path(&wal_dir, b.segment);
                return Err(Error::corrupt(path, b.offset, crate::error::UNKNOWN_OP));
            }
        }
    }
    let names = fs.list_dir(dir).map_err(Error::io("read dir", dir))?;
    let live = Live {
        version: &version,
        mem: &mem,
        // A read-only open beside a writer may list a flush output newer than it read.
        view: (access == Access::ReadOnly).then(|| {
            recovered
                .batches
                .last()
                .map_or(0, memforest_wal::RecoveredBatch::last_seqno)
                .max(mstate.flushed_seqno)
        }),
    };
    let torn = report.manifest_torn_tail.is_some();
    let mut unlisted = orphans::survey(fs, dir, &names, &mstate, current, torn, &live)?;
    report.quarantined = orphans::quarantined(&names);
    // A read-only open names the files a read-write open would set aside as they are now.
    let suffix = match access {
        Access::ReadWrite => {
            let garbage = unlisted.iter().any(|u| matches!(u.fate, Fate::Garbage(_)));
            if garbage
                && make_durable(fs, &manifest.lock().path(), &wal_dir, &wal.segment_ids()).is_err()
            {
                // What proved the garbage (a manifest record, WAL batches) may not be on
                // disk: set nothing aside and delete nothing; a later open decides.
                unlisted.retain(|u| matches!(u.fate, Fate::Quarantine(_)));
            }
            orphans::settle(fs, dir, &unlisted)?;
            orphans::QUARANTINE_SUFFIX
        }
        Access::ReadOnly => "",
    };
    for u in unlisted {
        let (garbage, reason) = match u.fate {
            Fate::Garbage(reason) => (true, reason),
            Fate::Quarantine(reason) => (false, reason),
        };
        if !garbage {
            report.quarantined.push(format!("{}{suffix}", u.name));
        }
        report.unlisted.push(UnlistedFile {
            name: u.name,
            garbage,
            reason,
        });
    }
    report.quarantined.sort();
    let mem = Arc::new(mem);
    let tombstones = load_tombstones(dir, &version, &mem)?;
    let next_file_id = mstate
        .next_file_id
        .max(orphans::max_file_id(&names) + 1)
        .max(current + 1)
        .max(free_file_id);
    Ok(Recovered {
        manifest,
        wal,
        state: LsmState {
            active: mem,
            imm: Vec::new(),
            version: Arc::new(version),
            tombstones,
        },
        next_file_id,
        budgets,
        cache,
        report,
    })
}

/// The options the store's WAL is opened with.
pub(crate) fn wal_options(options: &Options) -> WalOptions {
    WalOptions {
        segment_size: options.wal_segment_size,
        recovery_mode: options.recovery_mode,
        compression: options.wal_compression,
    }
}

/// Syncs the manifest and the WAL segments that recovery read, so what they say is on disk
/// before an open deletes files on their word: a record whose `fdatasync` failed (the
/// bytes reached the page cache, the engine refused to act on them) and buffered WAL
/// batches are read back by a reopen, and a crash after the reopen would lose them.
fn make_durable(
    fs: &dyn Storage,
    manifest: &Path,
    wal_dir: &Path,
    segments: &[u64],
) -> std::io::Result<()> {
    let wal = segments
        .iter()
        .map(|&id| memforest_wal::segment::path(wal_dir, id));
    for path in std::iter::once(manifest.to_path_buf()).chain(wal) {
        fs.open_append(&path)?.sync_data()?;
    }
    Ok(())
}

/// The directory's entries other than the lock file (empty for a missing directory).
fn entries(fs: &dyn Storage, dir: &Path) -> Result<Vec<String>> {
    match fs.list_dir(dir) {
        Ok(mut names) => {
            names.retain(|n| n != LOCK_FILE);
            names.sort();
            Ok(names)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io("read dir", dir)(e)),
    }
}

/// Longest manifest a creation that never reached `CURRENT` can leave: its one record is
/// the snapshot of an empty state, far below one 32 KiB block.
const UNFINISHED_MANIFEST_MAX: u64 = 32 << 10;

/// Creates a new store in `dir`: its first manifest and `CURRENT`, before anything else
/// (the WAL is created after, tracked by that manifest). Refuses any directory holding
/// more than the lock file, an empty `wal` directory, and what a creation that never
/// reached `CURRENT` leaves (`CURRENT.tmp`, a short manifest describing nothing), which is
/// removed. `from`: the state to start from (an object store's newest manifest), whose
/// segment files are fetched as they are opened.
fn create_store(
    storage: &Arc<dyn Storage>,
    dir: &Path,
    from: Option<&ManifestState>,
) -> Result<Manifest> {
    let fs = &**storage;
    let names = entries(fs, dir)?;
    let leftovers = creatable(fs, dir)?;
    for name in leftovers.iter().filter(|n| n.as_str() != WAL_DIR) {
        let path = dir.join(name);
        fs.remove_file(&path).map_err(Error::io("remove", &path))?;
    }
    let id = (orphans::max_file_id(&names) + 1).max(from.map_or(0, |s| s.next_file_id));
    let state = ManifestState {
        next_file_id: id + 1,
        ..from.cloned().unwrap_or_default()
    };
    Manifest::create(storage, dir, id, state)
}

/// What an interrupted creation left in `dir` (a directory without `CURRENT`), when that
/// is all it holds besides the lock file: a new store may be created there.
///
/// # Errors
/// [`Error::NotAStore`] naming the other entries; [`Error::Io`].
pub(crate) fn creatable(fs: &dyn Storage, dir: &Path) -> Result<Vec<String>> {
    let mut leftovers = Vec::new();
    let mut foreign = Vec::new();
    for name in entries(fs, dir)? {
        if unfinished_creation(fs, dir, &name)? {
            leftovers.push(name);
        } else {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        return Err(Error::NotAStore {
            path: dir.to_path_buf(),
            found: foreign,
        });
    }
    Ok(leftovers)
}

/// Whether `name` in a directory without `CURRENT` is what an interrupted creation left.
fn unfinished_creation(fs: &dyn Storage, dir: &Path, name: &str) -> Result<bool> {
    let path = dir.join(name);
    if name == "CURRENT.tmp" {
        return Ok(true);
    }
    if name == WAL_DIR {
        return Ok(fs.list_dir(&path).is_ok_and(|n| n.is_empty()));
    }
    let Some(id) = manifest::parse_file_name(name) else {
        return Ok(false);
    };
    let len = fs.file_len(&path).map_err(Error::io("stat", &path))?;
    if len > UNFINISHED_MANIFEST_MAX {
        return Ok(false);
    }
    let bytes = fs.read(&path).map_err(Error::io("read", &path))?;
    Ok(match manifest::replay(&bytes, id) {
        Ok(r) => r.state.segments.is_empty() && r.state.wal.is_empty(),
        // A torn or empty first record: the creation's snapshot never became durable.
        Err((0, _)) => torn_first_record(&bytes, id),
        Err(_) => false,
    })
}

/// Whether `bytes`, manifest `id` whose first record does not read, can be what a torn
/// write of that record left: nothing but zeros, or a header of this manifest as far as
/// the bytes go, its type byte included (a `Full` or `First` record, then `id`'s bytes;
/// `docs/format/wal.md`). Other bytes under a manifest's name (a file of the user's, or a
/// cut before the type byte, which cannot be told from one) are no creation of ours: the
/// directory is refused rather than the file removed.
fn torn_first_record(bytes: &[u8], id: u64) -> bool {
    if bytes.iter().all(|&b| b == 0) {
        return true;
    }
    let starts = [RecordType::Full.to_byte(), RecordType::First.to_byte()];
    let kind = bytes.get(6).is_some_and(|t| starts.contains(t));
    let log = bytes.get(7..).unwrap_or_default();
    kind && log.iter().zip(id.to_le_bytes()).all(|(&a, b)| a == b)
}

/// Opens every segment file the manifest lists (with a cache: those the directory holds,
/// then evicts down to its bound).
fn open_segments(
    storage: &Arc<dyn Storage>,
    budgets: &memforest_sst::ReadBudgets,
    cache: Option<&Arc<SegmentCache>>,
    options: &Options,
    dir: &Path,
    mstate: &ManifestState,
) -> Result<Version> {
    let mut segments = Vec::with_capacity(mstate.segments.len());
    for (level, info) in &mstate.segments {
        segments.push(open_listed(
            storage, budgets, cache, options, dir, *level, info,
        )?);
    }
    if let Some(c) = cache {
        c.shrink();
    }
    Ok(Version::from_segments(options.num_levels, segments))
}

/// Opens segment file `info` that a manifest lists at `level`. With a `cache` (whose
/// object store holds every file a manifest lists): a member of it, opened on first read
/// when `dir` has no copy. Without one, with an object store: fetched first when `dir`
/// lacks it.
///
/// # Errors
/// [`Error::InvalidArgument`] for a level beyond `num_levels`; [`Error::Remote`];
/// [`Error::Sst`].
pub(crate) fn open_listed(
    storage: &Arc<dyn Storage>,
    budgets: &memforest_sst::ReadBudgets,
    cache: Option<&Arc<SegmentCache>>,
    options: &Options,
    dir: &Path,
    level: u8,
    info: &SegmentInfo,
) -> Result<(usize, Arc<Segment>)> {
    let level = usize::from(level);
    if level >= options.num_levels {
        return Err(Error::InvalidArgument(
            "the manifest has more levels than num_levels",
        ));
    }
    let (sst, info) = (&options.sst, info.clone());
    if let Some(c) = cache {
        return Ok((
            level,
            Segment::cached(storage, budgets, sst, dir, info, c, true)?,
        ));
    }
    if let Some(r) = &options.remote {
        remote::fetch_segment(r, &**storage, dir, info.id)?;
    }
    Ok((
        level,
        Arc::new(Segment::open(storage, budgets, sst, dir, info)?),
    ))
}

/// The names of the WAL segment files set aside in `wal_dir` (`{id:020}.wal.quarantine`,
/// `memforest_wal::quarantine`), unsorted; none when the directory is missing.
///
/// # Errors
/// [`Error::Io`] when `wal_dir` cannot be listed.
pub(crate) fn wal_set_aside(fs: &dyn Storage, wal_dir: &Path) -> Result<Vec<String>> {
    match fs.list_dir(wal_dir) {
        Ok(names) => Ok(names
            .into_iter()
            .filter(|n| memforest_wal::quarantine::parse_file_name(n).is_some())
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io("read dir", wal_dir)(e)),
    }
}

/// Brings the manifest's WAL tracking up to date after the log opened: segments it keeps
/// but the manifest does not track (a manifest written before tracking existed, a segment
/// created just before a crash, a purge whose unlink a crash cut off) are recorded, and
/// the losses salvage accepted are recorded: a missing segment as deleted, a short one the
/// log kept as sealed at its length after recovery (`cut`, the log's
/// `RecoveryReport::truncated`, when recovery cut it further). A short one the log dropped
/// is recorded as deleted already. Writes only when there is something to record.
fn track_wal(
    manifest: &Mutex<Manifest>,
    wal: &Wal,
    lost: &[Lost],
    cut: Option<(u64, u64, u64)>,
) -> Result<()> {
    let mut m = manifest.lock();
    let live = wal.segment_ids();
    let mut edits: Vec<Edit> = live
        .iter()
        .filter(|id| !m.state().wal.contains_key(id))
        .map(|&id| Edit::WalCreated { id })
        .collect();
    let missing: Vec<u64> = lost
        .iter()
        .filter(|l| l.len.is_none())
        .map(|l| l.id)
        .collect();
    if !missing.is_empty() {
        edits.push(Edit::WalDeleted { ids: missing });
    }
    for l in lost.iter().filter(|l| live.contains(&l.id)) {
        let Some(len) = l.len else { continue };
        let size = match cut {
            Some((id, _, new)) if id == l.id => new,
            _ => len,
        };
        if m.state().wal.get(&l.id) != Some(&Some(size)) {
            edits.push(Edit::WalSealed { id: l.id, size });
        }
    }
    if edits.is_empty() {
        return Ok(());
    }
    m.append(&edits)
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

/// Every range tombstone stored in the segment files or the replayed memtable.
pub(crate) fn load_tombstones(
    dir: &Path,
    version: &Version,
    mem: &Arc<MemTable>,
) -> Result<RangeTombstones> {
    let lower = Bytes::copy_from_slice(&range_del::PREFIX);
    let upper = crate::db::successor_bound(&range_del::PREFIX);
    let mut sources: Vec<BoxedSource> = vec![Box::new(mem.cursor())];
    sources.extend(version.sources(
        std::ops::Bound::Included(&lower[..]),
        std::ops::Bound::Unbounded,
    )?);
    let options = ScanOptions {
        lower: std::ops::Bound::Included(lower),
        upper,
        ..ScanOptions::default()
    };
    let mut found = Vec::new();
    for e in MergeIterator::scan(sources, options)? {
        let e = e?;
        let t = range_del::RangeTombstone::decode(&e.user_key, &e.value)
            .ok_or_else(|| Error::corrupt(dir, 0, "a stored range tombstone does not decode"))?;
        found.push(t);
    }
    Ok(RangeTombstones::default().with(found))
}

/// Whether `e` says a file vanished: a read-only open racing a writer's manifest rewrite,
/// purge or compaction, which a retry resolves.
pub(crate) fn vanished(e: &Error) -> bool {
    let not_found = |source: &std::io::Error| source.kind() == std::io::ErrorKind::NotFound;
    match e {
        Error::Io { source, .. } => not_found(source),
        Error::Wal(memforest_wal::WalError::Io { source, .. }) => not_found(source),
        Error::Sst(memforest_sst::SstError::Io { source, .. }) => not_found(source),
        Error::Corrupt { reason, .. } => {
            reason.starts_with("WAL segment recorded") || reason == crate::version::MISSING_SEGMENT
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cut of a creation's first manifest record that holds its type byte is an
    /// unfinished creation, removed when a store is created there; a user's file under a
    /// manifest's name is not, nor is a shorter cut (it cannot be told from one).
    #[test]
    fn only_a_cut_of_its_own_first_record_is_an_unfinished_creation() {
        let storage = memforest_io::default_storage();
        let made = tempfile::tempdir().unwrap();
        let state = ManifestState {
            next_file_id: 2,
            ..ManifestState::default()
        };
        drop(Manifest::create(&storage, made.path(), 1, state).unwrap());
        let name = manifest::file_name(1);
        let whole = std::fs::read(made.path().join(&name)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(&name);
        let cuts = (7..=whole.len()).map(|n| whole[..n].to_vec());
        for bytes in cuts.chain([Vec::new(), vec![0; 40]]) {
            std::fs::write(&path, &bytes).unwrap();
            assert!(
                unfinished_creation(&*storage, dir.path(), &name).unwrap(),
                "{bytes:?}"
            );
        }
        let mut other_id = whole.clone();
        other_id[7] ^= 1;
        let short = whole[..6].to_vec();
        for bytes in [b"my notes".to_vec(), b"junk".to_vec(), short, other_id] {
            std::fs::write(&path, &bytes).unwrap();
            assert!(
                !unfinished_creation(&*storage, dir.path(), &name).unwrap(),
                "{bytes:?}"
            );
            let err = creatable(&*storage, dir.path()).unwrap_err();
            assert!(matches!(err, Error::NotAStore { .. }), "{err}");
        }
    }
}
