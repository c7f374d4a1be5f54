//! [`Db::repair`]: rebuilds a store's manifest from the segment files and the WAL that are
//! present (RocksDB `RepairDB`), for a store that lost its `CURRENT` or manifest, holds
//! quarantined files, or tracks WAL segments that are gone.
//!
//! 1. With an object-storage tier, the segment files the local manifest or the newest
//!    manifest object lists that the directory lacks (a bounded cache's evicted copies)
//!    are fetched first. Every segment file (`<id>.sst`, and `<id>.sst.quarantine` set aside by an earlier
//!    open) is read whole: footer, properties, index, every data block's checksum, and the
//!    entry count against its properties. A file that reads back is adopted (a quarantined
//!    one is renamed back to `<id>.sst`); one that does not is set aside (or left) as
//!    `<id>.sst.quarantine` and reported. One the WAL and the previous manifest prove
//!    to be another store's (`repair_foreign`) is set aside as `<name>.foreign` and
//!    reported.
//! 2. The new manifest's state lists the adopted files at level 0 (newest first by their
//!    largest seqno), with the flushed point at the largest seqno any of them holds,
//!    raised to the previous manifest's flushed point unless the WAL holds every write up
//!    to it (`WalWrites::flushed_point`), and
//!    tracks the WAL segments present (at the synced lengths the previous manifest
//!    recorded): the ones missing between them are lost. The WAL is recovered read-only
//!    against it, under the caller's recovery mode, reading past those gaps; what the
//!    open in step 3 would refuse fails the repair here, before anything changed.
//! 3. Files are renamed (taken back from quarantine, or set aside), the manifest is
//!    written and `CURRENT` pointed at it; the previous manifest is removed as superseded
//!    by the open that follows. The store is opened: the WAL segments present are
//!    replayed above the flushed point, the segments after a gap included. WAL segments
//!    and segment files the previous manifest tracked but that are gone, and the gaps
//!    read past, are reported: their writes are lost.
//! 4. Every file is compacted into the deepest level, which resolves level 0's overlapping
//!    files by seqno. When the open read past WAL damage (`RecoveryMode::SkipAnyCorrupted`),
//!    the store is purged instead ([`Db::purge`]): the WAL is rotated and its segments,
//!    their writes now in segment files, leave it; the damaged ones are set aside as
//!    `{id:020}.wal.quarantine`, never deleted.
//!
//! Adopting a quarantined file can bring back keys deleted after it was written when it
//! was a stale compaction input (its newer tombstones were already dropped at the bottom
//! level); that is why an open never adopts it by itself.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use memforest_object::Remote;

use memforest_sst::{EntrySource, SstReader};
use memforest_wal::Wal;
use serde::Serialize;

use crate::batch::Op;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::lock::DirLock;
use crate::manifest::{self, Manifest, ManifestState};
use crate::open::WAL_DIR;
use crate::options::Options;
use crate::orphans::{self, FOREIGN_SUFFIX, QUARANTINE_SUFFIX};
use crate::remote;
use crate::repair_foreign::WalWrites;
use crate::version::SegmentInfo;
use crate::wal_damage::WalDamage;
use crate::wal_tracking::{self, StateLedger};

/// Fetches into `dir` the segment files that the local manifest (`previous`) or the
/// newest manifest object lists, that `remote` holds and `dir` lacks: with a bounded cache
/// (`Options::remote_cache_bytes`) the directory holds only some live files, and a missing
/// copy is not damage.
fn fetch_listed(
    remote: &Remote,
    fs: &dyn memforest_io::Storage,
    dir: &Path,
    previous: Option<&Manifest>,
) -> Result<()> {
    let mut listed: BTreeSet<u64> = previous
        .map(|m| m.state().segments.iter().map(|(_, s)| s.id).collect())
        .unwrap_or_default();
    if let Some((_, state)) = remote::newest(remote)? {
        listed.extend(state.segments.iter().map(|(_, s)| s.id));
    }
    let stored: BTreeSet<u64> = remote
        .list(remote::SST_DIR)?
        .iter()
        .filter_map(|l| orphans::segment_id(&l.name))
        .collect();
    for &id in listed.intersection(&stored) {
        remote::fetch_segment(remote, fs, dir, id)?;
    }
    Ok(())
}

/// What [`Db::repair`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RepairReport {
    /// Segment files now live (file names), including quarantined ones taken back.
    pub adopted: Vec<String>,
    /// Of those, the ones that were quarantined.
    pub unquarantined: Vec<String>,
    /// Segment files that do not read back, with the reason; they stay (or are now) set
    /// aside as `<name>.quarantine`.
    pub unreadable: Vec<(String, String)>,
    /// Segment files set aside as `<name>.foreign` (`.foreign.1` ... when that name is
    /// taken; never adopted, not deleted), each with the seqno that proves it foreign:
    /// where it holds another write than the WAL, or, unlisted by the previous manifest,
    /// its largest seqno when that is above every seqno the store gave durably. A segment
    /// file of another store, or one whose seqnos the store's later writes reused
    /// (`repair_foreign`). Adopted, it would have hidden the store's WAL writes below its
    /// seqnos.
    pub foreign: Vec<(String, u64)>,
    /// The manifest that was replaced, if `CURRENT` named a readable one.
    pub previous_manifest: Option<String>,
    /// WAL segments the previous manifest tracked as live that are missing: their
    /// acknowledged writes are lost.
    pub wal_lost: Vec<u64>,
    /// Segment files the previous manifest listed that are missing (neither the file nor
    /// a quarantined copy is in the directory or, with an object store, fetched from it):
    /// their entries are lost.
    pub segments_lost: Vec<String>,
    /// Runs of WAL segments missing between present ones (lost, whether or not the
    /// previous manifest tracked them), which the replay read past: the writes they held
    /// are lost, and the batches of the segments after them were replayed.
    pub wal_gaps: Vec<WalGap>,
    /// WAL segment files set aside (`{id:020}.wal.quarantine`, this repair or before):
    /// not replayed and not deleted ([`crate::OpenReport::wal_quarantined`]). Under
    /// `RecoveryMode::SkipAnyCorrupted`, the segments whose damage was read past are among
    /// them.
    pub wal_set_aside: Vec<String>,
    /// Damaged WAL regions read past (`RecoveryMode::SkipAnyCorrupted`) or stopped at
    /// (`RecoveryMode::PointInTime`), with the writes lost in each gap after one
    /// ([`WalDamage::lost`]); other modes fail the repair on damage instead.
    pub wal_skipped: Vec<WalDamage>,
    /// WAL segments the repair replayed (above the flushed point): those present that
    /// recovery kept.
    pub wal_segments: u64,
    /// Entries in the adopted files.
    pub entries: u64,
}

/// WAL segments `first..=last` are missing between present ones; the writes with
/// sequence numbers `first_seqno..=last_seqno` were in them (none when `first_seqno >
/// last_seqno`: they held no batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WalGap {
    /// First missing segment id.
    pub first: u64,
    /// Last missing segment id.
    pub last: u64,
    /// First lost sequence number.
    pub first_seqno: u64,
    /// Last lost sequence number.
    pub last_seqno: u64,
}

impl From<memforest_wal::SegmentGap> for WalGap {
    fn from(g: memforest_wal::SegmentGap) -> Self {
        Self {
            first: g.first,
            last: g.last,
            first_seqno: g.seqnos.0,
            last_seqno: g.seqnos.1,
        }
    }
}

impl Db {
    /// Rebuilds the manifest of the store in `dir` from the segment files and WAL present,
    /// then opens it, compacts it and closes it (see the module documentation of
    /// `repair.rs`). Takes the lock: no other handle may be open. Deletes no data. WAL
    /// damage the recovery mode refuses fails the repair before anything changes; under
    /// `RecoveryMode::SkipAnyCorrupted` (salvage) every write that reads back is kept, the
    /// damage and the writes lost with it are reported ([`RepairReport::wal_skipped`]),
    /// and the damaged WAL segments are set aside, so later opens in the default mode
    /// succeed.
    ///
    /// # Errors
    /// [`Error::Locked`]; [`Error::NeedsLocation`] without `options.remote` for the
    /// directory of a store on an object store, [`Error::ForeignDirectory`] with it for a
    /// directory of another store (both before anything changes); [`Error::Io`];
    /// [`Error::InvalidArgument`] for an empty `dir` path or a directory
    /// holding no segment file that reads back whole, no manifest that reads and no WAL
    /// (nothing to repair; without
    /// `options.remote` refused before the lock file is made); the open's errors (WAL
    /// damage the recovery mode refuses).
    pub fn repair(dir: impl AsRef<Path>, options: Options) -> Result<RepairReport> {
        options.validate()?;
        let dir = dir.as_ref();
        crate::open::check_dir_path(dir)?;
        let fs = &*options.storage;
        // Refused before the lock file is made: a directory that is no store stays as it was.
        if options.remote.is_none() {
            // Both only read: a store on an object store needs its location first.
            crate::remote_binding::refuse_without_location(fs, dir)?;
            if !holds_store_files(fs, dir)? {
                return Err(NOTHING_TO_REPAIR);
            }
        }
        let mut report = RepairReport::default();
        {
            let _lock = DirLock::acquire(dir)?;
            let previous = Manifest::load(&options.storage, dir).ok().flatten();
            match &options.remote {
                Some(r) => {
                    // Before anything changes: the open at the end would refuse it too.
                    crate::remote_binding::check_writer(fs, dir, r)?;
                    fetch_listed(r, fs, dir, previous.as_ref())?;
                }
                None => crate::remote_binding::refuse_without_location(fs, dir)?,
            }
            let names = fs.list_dir(dir).map_err(Error::io("read dir", dir))?;
            let wal_dir = dir.join(WAL_DIR);
            let wal_present = wal_segment_ids(fs, &wal_dir)?;
            // The WAL segments present are tracked, at the synced lengths the previous
            // manifest recorded: the ones missing between them are lost (and read past).
            let synced = |id| {
                previous
                    .as_ref()
                    .and_then(|m| m.state().wal.get(&id).copied().flatten())
            };
            let tracked = ManifestState {
                wal: wal_present.iter().map(|&id| (id, synced(id))).collect(),
                wal_tracked: true,
                ..ManifestState::default()
            };
            // Everything the open below reads is checked before anything changes: a WAL the
            // recovery mode refuses leaves the store as it was. Read before the segment
            // files, to tell the store's files from others; recovery depends only on the
            // WAL tracking, which the manifest written below keeps.
            let (last, recovered) = recover(&options, &wal_dir, &tracked)?;
            let dropped = recovered.report.deleted_segments.len();
            report.wal_segments = wal_present.len().saturating_sub(dropped) as u64;
            let wal = WalWrites::of(&recovered.batches, last);
            // With a previous manifest: the files it lists, and the largest seqno this
            // store gave durably (`repair_foreign`).
            let known = previous.as_ref().map(|m| {
                let listed: BTreeSet<u64> = m.state().segments.iter().map(|(_, s)| s.id).collect();
                (listed, m.state().flushed_seqno.max(wal.last()))
            });
            if let Some(m) = &previous {
                report.previous_manifest = Some(manifest::file_name(m.id()));
                report.wal_lost = m
                    .state()
                    .wal
                    .keys()
                    .copied()
                    .filter(|id| !wal_present.contains(id))
                    .collect();
            }
            let mut candidates = Vec::new();
            let mut found = BTreeSet::new();
            let mut segments = Vec::new();
            for name in &names {
                let (base, quarantined) = match name.strip_suffix(QUARANTINE_SUFFIX) {
                    Some(base) => (base, true),
                    None => (name.as_str(), false),
                };
                let Some(id) = orphans::segment_id(base) else {
                    continue;
                };
                found.insert(id);
                let read = read_whole(fs, &dir.join(name), id, &wal).map(|(info, conflict)| {
                    let beyond = known
                        .as_ref()
                        .filter(|(listed, seqno)| !listed.contains(&id) && info.max_seqno > *seqno)
                        .map(|_| info.max_seqno);
                    (info, conflict.or(beyond))
                });
                if let Ok((info, None)) = &read {
                    segments.push((0u8, info.clone()));
                }
                candidates.push((name, base, quarantined, read));
            }
            if let Some(m) = &previous {
                report.segments_lost = m
                    .state()
                    .segments
                    .iter()
                    .filter(|(_, s)| !found.contains(&s.id))
                    .map(|(_, s)| memforest_sst::file_name(s.id))
                    .collect();
            }
            if segments.is_empty() && wal_present.is_empty() && previous.is_none() {
                return Err(NOTHING_TO_REPAIR);
            }
            let files = segments.iter().map(|(_, s)| s.max_seqno).max().unwrap_or(0);
            let flushed = previous.as_ref().map_or(0, |m| m.state().flushed_seqno);
            let flushed_seqno = wal.flushed_point(files, flushed);
            let id = orphans::max_file_id(&names) + 1;
            let state = ManifestState {
                segments,
                flushed_seqno,
                next_file_id: id + 1,
                ..tracked
            };
            check_ops(&recovered, &wal_dir, state.flushed_seqno)?;
            report.wal_gaps = recovered
                .report
                .gaps
                .into_iter()
                .map(WalGap::from)
                .collect();
            for (name, base, quarantined, read) in candidates {
                let path = dir.join(name);
                match read {
                    Ok((_, Some(seqno))) => {
                        let to = dir.join(free_name(&names, &format!("{base}{FOREIGN_SUFFIX}")));
                        fs.rename(&path, &to).map_err(Error::io("rename", &path))?;
                        report.foreign.push((base.to_string(), seqno));
                    }
                    Ok((info, None)) => {
                        report.entries += info.entry_count;
                        if quarantined {
                            let to = dir.join(base);
                            fs.rename(&path, &to).map_err(Error::io("rename", &path))?;
                            report.unquarantined.push(base.to_string());
                        }
                        report.adopted.push(base.to_string());
                    }
                    Err(e) => {
                        if !quarantined {
                            let to = dir.join(format!("{name}{QUARANTINE_SUFFIX}"));
                            fs.rename(&path, &to).map_err(Error::io("rename", &path))?;
                        }
                        report.unreadable.push((base.to_string(), e.to_string()));
                    }
                }
            }
            Manifest::create(&options.storage, dir, id, state)?;
        }
        // Nothing may read by key until the compaction below has resolved level 0's
        // overlapping files: a point read of an overlapped key may find an older version.
        let db = Db::open(dir, options)?;
        report.wal_skipped.clone_from(&db.open_report().wal_skipped);
        if report.wal_skipped.is_empty() {
            db.compact_all()?;
        } else {
            // The damaged segments leave the log (set aside, their writes now in segment
            // files), so the next open, in any recovery mode, reads a whole WAL.
            db.purge()?;
        }
        let wal_dir = dir.join(WAL_DIR);
        report.wal_set_aside = crate::open::wal_set_aside(&*db.core().options.storage, &wal_dir)?;
        report.wal_set_aside.sort();
        db.close()?;
        report.adopted.sort();
        report.unquarantined.sort();
        Ok(report)
    }
}

/// The ids of the WAL segment files in `wal_dir` (none when it is missing), ascending.
///
/// # Errors
/// [`Error::Io`] when `wal_dir` cannot be listed.
fn wal_segment_ids(fs: &dyn memforest_io::Storage, wal_dir: &Path) -> Result<BTreeSet<u64>> {
    match fs.list_dir(wal_dir) {
        Ok(names) => Ok(names
            .iter()
            .filter_map(|n| memforest_wal::segment::parse_file_name(n))
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeSet::new()),
        Err(e) => Err(Error::io("read dir", wal_dir)(e)),
    }
}

/// Checks that every batch of `recovered` (the WAL in `wal_dir`) the open that ends the
/// repair would replay, above `flushed`, holds only known ops.
///
/// # Errors
/// An unknown op ([`Error::Corrupt`], naming the segment and offset).
fn check_ops(recovered: &memforest_wal::Recovered, wal_dir: &Path, flushed: u64) -> Result<()> {
    for b in &recovered.batches {
        for (seqno, e) in (b.first_seqno..).zip(b.batch.entries()) {
            if seqno > flushed && Op::from_byte(e.kind).is_none() {
                let path = memforest_wal::segment::path(wal_dir, b.segment);
                return Err(Error::corrupt(path, b.offset, crate::error::UNKNOWN_OP));
            }
        }
    }
    Ok(())
}

/// Checks the WAL segments `state` tracks are present and whole (`wal_tracking::check`),
/// then recovers the WAL in `wal_dir` read-only against `state`, under the caller's
/// recovery mode, as the open that ends the repair will: its last seqno, and what
/// recovery read (the batches, and the runs of missing segments it read past).
///
/// # Errors
/// A tracked segment missing or shorter than its synced length ([`Error::Corrupt`]); WAL
/// damage the recovery mode does not tolerate ([`Error::Wal`]); [`Error::Io`].
fn recover(
    options: &Options,
    wal_dir: &Path,
    state: &ManifestState,
) -> Result<(u64, memforest_wal::Recovered)> {
    wal_tracking::check(&*options.storage, wal_dir, state, options.recovery_mode)?;
    let ledger = Arc::new(StateLedger(state.clone()));
    let storage = Arc::clone(&options.storage);
    let wal_options = crate::open::wal_options(options);
    let (wal, recovered) = Wal::open_read_only_tracked(storage, wal_dir, wal_options, ledger)?;
    Ok((wal.last_seqno(), recovered))
}

/// `name`, or else `name.1`, `name.2` ..., the first that is not among `names` (the
/// directory's files): a file set aside never replaces another.
fn free_name(names: &[String], name: &str) -> String {
    std::iter::once(name.to_owned())
        .chain((1u64..).map(|n| format!("{name}.{n}")))
        .find(|n| !names.contains(n))
        .unwrap_or_else(|| name.to_owned())
}

/// What a repair of a directory with no store's files answers.
const NOTHING_TO_REPAIR: Error = Error::InvalidArgument(
    "nothing to repair: no segment file that reads back whole, no WAL segment and no \
     CURRENT naming a manifest that reads (a MANIFEST-* file shorter than a record header is \
     what a crash during a store's creation can leave: remove it, and the next open creates \
     the store)",
);

/// Whether `dir` holds a file a repair starts from: a segment file (set aside or not), a
/// manifest or a WAL segment.
///
/// # Errors
/// [`Error::Io`] when `dir` cannot be listed.
fn holds_store_files(fs: &dyn memforest_io::Storage, dir: &Path) -> Result<bool> {
    let names = fs.list_dir(dir).map_err(Error::io("read dir", dir))?;
    let ours = names.iter().any(|n| {
        let base = n.strip_suffix(QUARANTINE_SUFFIX).unwrap_or(n);
        orphans::segment_id(base).is_some() || manifest::parse_file_name(base).is_some()
    });
    Ok(ours || holds_wal_segment(fs, dir))
}

/// Whether the WAL directory of `dir` holds a WAL segment.
fn holds_wal_segment(fs: &dyn memforest_io::Storage, dir: &Path) -> bool {
    fs.list_dir(&dir.join(WAL_DIR)).is_ok_and(|n| {
        n.iter()
            .any(|n| memforest_wal::segment::parse_file_name(n).is_some())
    })
}

/// Reads segment file `path` (id `id`) whole and returns its manifest record, with the
/// first seqno at which it holds another write than `wal`'s (then it is not the store's,
/// `repair_foreign`).
fn read_whole(
    fs: &dyn memforest_io::Storage,
    path: &Path,
    id: u64,
    wal: &WalWrites,
) -> Result<(SegmentInfo, Option<u64>)> {
    let reader = SstReader::open_with(fs, path)?;
    let props = reader.properties().clone();
    let mut it = reader.iter()?;
    it.seek_to_first()?;
    let mut count = 0u64;
    let mut conflict: Option<u64> = None;
    while let Some(e) = it.next_entry()? {
        count += 1;
        if wal.conflicts(&e.user_key, e.seqno, e.kind, &e.value) {
            conflict = Some(conflict.map_or(e.seqno, |c| c.min(e.seqno)));
        }
    }
    if count != props.entry_count || count == 0 {
        return Err(Error::corrupt(
            path,
            0,
            format!(
                "holds {count} entries, its properties record {}",
                props.entry_count
            ),
        ));
    }
    let info = SegmentInfo {
        id,
        file_size: reader.file_size(),
        smallest: props.smallest_user_key,
        largest: props.largest_user_key,
        min_seqno: props.min_seqno,
        max_seqno: props.max_seqno,
        entry_count: count,
    };
    Ok((info, conflict))
}
