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
//!    `<id>.sst.quarantine` and reported.
//! 2. A new manifest lists the adopted files at level 0 (newest first by their largest
//!    seqno), with the flushed point at the largest seqno any of them holds, and tracks no
//!    WAL segment; `CURRENT` is pointed at it. The previous manifest stays on disk until a
//!    later open removes it as superseded.
//! 3. The store is opened: the WAL segments present are replayed above the flushed
//!    point (under the caller's recovery mode) and tracked from then on. WAL segments and
//!    segment files the previous manifest tracked but that are gone are reported: their
//!    writes are lost.
//! 4. Every file is compacted into the deepest level, which resolves level 0's overlapping
//!    files by seqno.
//!
//! Adopting a quarantined file can bring back keys deleted after it was written when it
//! was a stale compaction input (its newer tombstones were already dropped at the bottom
//! level); that is why an open never adopts it by itself.

use std::collections::BTreeSet;
use std::path::Path;

use memforest_object::Remote;

use memforest_sst::{EntrySource, SstReader};
use serde::Serialize;

use crate::db::Db;
use crate::error::{Error, Result};
use crate::lock::DirLock;
use crate::manifest::{self, Manifest, ManifestState};
use crate::open::WAL_DIR;
use crate::options::Options;
use crate::orphans::{self, QUARANTINE_SUFFIX};
use crate::remote;
use crate::version::SegmentInfo;

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
    /// The manifest that was replaced, if `CURRENT` named a readable one.
    pub previous_manifest: Option<String>,
    /// WAL segments the previous manifest tracked as live that are missing: their
    /// acknowledged writes are lost.
    pub wal_lost: Vec<u64>,
    /// Segment files the previous manifest listed that are missing (neither the file nor
    /// a quarantined copy is in the directory or, with an object store, fetched from it):
    /// their entries are lost.
    pub segments_lost: Vec<String>,
    /// WAL segments present after the repair (replayed above the flushed point, tracked).
    pub wal_segments: u64,
    /// Entries in the adopted files.
    pub entries: u64,
}

impl Db {
    /// Rebuilds the manifest of the store in `dir` from the segment files and WAL present,
    /// then opens it, compacts it and closes it (see the module documentation of
    /// `repair.rs`). Takes the lock: no other handle may be open. Deletes nothing.
    ///
    /// # Errors
    /// [`Error::Locked`]; [`Error::NeedsLocation`] without `options.remote` for the
    /// directory of a store on an object store, [`Error::ForeignDirectory`] with it for a
    /// directory of another store (both before anything changes); [`Error::Io`];
    /// [`Error::InvalidArgument`] for an empty `dir` path or a directory
    /// holding no segment file, no manifest and no WAL (nothing to repair; without
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
            if let Some(m) = &previous {
                report.previous_manifest = Some(manifest::file_name(m.id()));
                let wal_dir = dir.join(WAL_DIR);
                report.wal_lost = m
                    .state()
                    .wal
                    .keys()
                    .copied()
                    .filter(|&id| {
                        fs.file_len(&memforest_wal::segment::path(&wal_dir, id))
                            .is_err()
                    })
                    .collect();
            }
            let mut segments = Vec::new();
            let mut found = BTreeSet::new();
            for name in &names {
                let (base, quarantined) = match name.strip_suffix(QUARANTINE_SUFFIX) {
                    Some(base) => (base, true),
                    None => (name.as_str(), false),
                };
                let Some(id) = orphans::segment_id(base) else {
                    continue;
                };
                found.insert(id);
                let path = dir.join(name);
                match read_whole(fs, &path, id) {
                    Ok(info) => {
                        report.entries += info.entry_count;
                        if quarantined {
                            let to = dir.join(base);
                            fs.rename(&path, &to).map_err(Error::io("rename", &path))?;
                            report.unquarantined.push(base.to_string());
                        }
                        report.adopted.push(base.to_string());
                        segments.push((0u8, info));
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
            if let Some(m) = &previous {
                report.segments_lost = m
                    .state()
                    .segments
                    .iter()
                    .filter(|(_, s)| !found.contains(&s.id))
                    .map(|(_, s)| memforest_sst::file_name(s.id))
                    .collect();
            }
            if segments.is_empty() && !holds_wal_segment(fs, dir) && previous.is_none() {
                return Err(NOTHING_TO_REPAIR);
            }
            let flushed_seqno = segments.iter().map(|(_, s)| s.max_seqno).max().unwrap_or(0);
            let id = orphans::max_file_id(&names) + 1;
            let state = ManifestState {
                segments,
                flushed_seqno,
                next_file_id: id + 1,
                ..ManifestState::default()
            };
            Manifest::create(&options.storage, dir, id, state)?;
        }
        // Nothing may read by key until the compaction below has resolved level 0's
        // overlapping files: a point read of an overlapped key may find an older version.
        let db = Db::open(dir, options)?;
        report.wal_segments = db.core().wal.segment_ids().len() as u64;
        db.compact_all()?;
        db.close()?;
        report.adopted.sort();
        report.unquarantined.sort();
        Ok(report)
    }
}

/// What a repair of a directory with no store's files answers.
const NOTHING_TO_REPAIR: Error =
    Error::InvalidArgument("nothing to repair: no segment file, no WAL segment and no manifest");

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

/// Reads segment file `path` (id `id`) whole and returns its manifest record.
fn read_whole(fs: &dyn memforest_io::Storage, path: &Path, id: u64) -> Result<SegmentInfo> {
    let reader = SstReader::open_with(fs, path)?;
    let props = reader.properties().clone();
    let mut it = reader.iter()?;
    it.seek_to_first()?;
    let mut count = 0u64;
    while it.next_entry()?.is_some() {
        count += 1;
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
    Ok(SegmentInfo {
        id,
        file_size: reader.file_size(),
        smallest: props.smallest_user_key,
        largest: props.largest_user_key,
        min_seqno: props.min_seqno,
        max_seqno: props.max_seqno,
        entry_count: count,
    })
}
