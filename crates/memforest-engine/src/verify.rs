//! [`Db::verify`]: a read-only scan of every checksum and invariant of an open database
//! (RocksDB `VerifyChecksum` plus `ldb checkconsistency`). The memory store adds its
//! MemTree checks on top (`memforest`'s `Memory::verify`).
//!
//! 1. `CURRENT` and the manifest are read back and replayed; the replayed segment set must
//!    equal the engine's (the manifest lock is held so no flush or compaction commits).
//! 2. Level invariants of the live version: every level listed in the manifest at the
//!    same level; each file's smallest key <= largest key and min seqno <= max seqno;
//!    every level from 1 on sorted by smallest key with no two files overlapping.
//! 3. Every live segment file: its size equals the manifest's record; it is opened afresh
//!    (footer, properties, bloom filter and index blocks verified) and every data block
//!    is read (each block's checksum verified); its entry count and first and last user
//!    keys equal the manifest's record.
//! 4. The WAL: every segment replayed (`TolerateCorruptedTail`: appends may be in flight
//!    at the end of the last segment; damage anywhere else is reported).
//!
//! Segment files in the directory that the manifest does not list were settled by the open
//! (see [`crate::orphans`]): provable garbage is not damage; a quarantined file is
//! ([`VerifyReport::quarantined`], [`VerifyReport::is_clean`]), and so is a WAL loss that
//! salvage accepted. On a read-only handle (`Db::open_read_only`, what `memforest verify`
//! uses) nothing is changed: the files a read-write open would quarantine are reported as
//! quarantined. A read-only handle beside a running writer checks the state as of its
//! open; when the writer has since moved the manifest on, the comparison of step 1 is
//! skipped ([`VerifyReport::store_changed`]).

use std::collections::BTreeSet;
use std::path::Path;

use memforest_sst::{EntrySource, SstReader};
use memforest_wal::recovery::{plan, SegmentImage};
use memforest_wal::RecoveryMode;
use serde::Serialize;

use crate::db::Db;
use crate::error::{Error, Result};
use crate::manifest::{self, ManifestState};
use crate::open::WAL_DIR;
use crate::orphans::QUARANTINE_SUFFIX;
use crate::version::{Fetch, Segment, Version};
use crate::wal_tracking;

/// What a clean [`Db::verify`] checked (counts), and the unlisted files it saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Bytes of the manifest replayed (up to its last whole record).
    pub manifest_bytes: u64,
    /// Byte offset of a torn last manifest record still on disk (dropped at open, cut off
    /// by the next manifest append), if any.
    pub manifest_torn_tail: Option<u64>,
    /// Live files per level (index = level).
    pub level_files: Vec<u64>,
    /// Segment files checked.
    pub segment_files: u64,
    /// Bytes of segment files read.
    pub segment_bytes: u64,
    /// Entries read from them (every data block).
    pub entries: u64,
    /// Segment files set aside as damage (see [`crate::OpenReport::quarantined`]).
    pub quarantined: Vec<String>,
    /// The unlisted files the open deleted as garbage or quarantined, with the reason.
    pub unlisted: Vec<crate::UnlistedFile>,
    /// Tracked WAL segments found missing or short and accepted by salvage.
    pub wal_missing: Vec<u64>,
    /// WAL segment files set aside by recovery, or (read-only) that the next read-write
    /// open sets aside (see [`crate::OpenReport::wal_quarantined`]).
    pub wal_quarantined: Vec<String>,
    /// A read-only handle found that a writer changed the manifest since its open.
    pub store_changed: bool,
    /// WAL segment files replayed.
    pub wal_files: u64,
    /// WAL batches decoded.
    pub wal_batches: u64,
}

impl VerifyReport {
    /// True when nothing is damaged: no quarantined segment or WAL file, no accepted WAL
    /// loss.
    /// (A torn manifest tail alone is not damage: the open proved what it described
    /// redundant or quarantined it.)
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.quarantined.is_empty()
            && self.wal_missing.is_empty()
            && self.wal_quarantined.is_empty()
    }
}

impl Db {
    /// Reads every file of the database back and checks every checksum and invariant
    /// (see the module documentation of `verify.rs` for the list). Writes nothing; safe
    /// while the database is in use (flushes and compactions wait for the manifest
    /// check). Damage that does not stop the store from
    /// serving (quarantined files, accepted WAL loss) is reported, not returned as an
    /// error: check [`VerifyReport::is_clean`].
    ///
    /// # Errors
    /// The first damage found: [`Error::Corrupt`] naming the file (manifest, `CURRENT`,
    /// segment file) and the byte offset, [`Error::Sst`] for a segment file
    /// that does not open or a block that does not verify, [`Error::Wal`] for WAL damage;
    /// [`Error::Io`] when a file cannot be read.
    pub fn verify(&self) -> Result<VerifyReport> {
        let mut r = VerifyReport::default();
        let version = self.verify_manifest(&mut r)?;
        let storage = &*self.core().options.storage;
        for (_, seg) in version.all() {
            match check_segment(storage, self.dir(), seg, &mut r) {
                // A writer compacted it away since this read-only handle opened.
                Err(e) if r.store_changed && crate::open::vanished(&e) => {}
                other => other?,
            }
        }
        let names = storage
            .list_dir(self.dir())
            .map_err(Error::io("read dir", self.dir()))?;
        let open = self.open_report();
        r.quarantined = open.quarantined.clone();
        for name in names.into_iter().filter(|n| n.ends_with(QUARANTINE_SUFFIX)) {
            if !r.quarantined.contains(&name) {
                r.quarantined.push(name);
            }
        }
        r.quarantined.sort();
        r.unlisted = open.unlisted.clone();
        r.wal_missing = open.wal_missing.clone();
        r.wal_quarantined = open.wal_quarantined.clone();
        self.verify_wal(&mut r)?;
        Ok(r)
    }

    /// Step 1 and 2: the manifest on disk against the engine's state, and the level
    /// invariants of the version the manifest describes (returned for step 3).
    fn verify_manifest(&self, r: &mut VerifyReport) -> Result<std::sync::Arc<Version>> {
        let storage = &*self.core().options.storage;
        let m = self.core().lock_manifest();
        let version = std::sync::Arc::clone(&self.core().state().version);
        let current = self.dir().join(manifest::CURRENT);
        let data = storage
            .read(&current)
            .map_err(Error::io("read", &current))?;
        let id = manifest::parse_current(&data)
            .map_err(|(at, reason)| Error::corrupt(&current, at, reason))?;
        let path = m.path();
        let read_only = self.is_read_only();
        if id != m.id() {
            if read_only {
                r.store_changed = true;
                r.manifest_torn_tail = self.open_report().manifest_torn_tail;
                drop(m);
                check_levels(&path, &version)?;
                r.level_files = version.levels.iter().map(|l| l.len() as u64).collect();
                return Ok(version);
            }
            return Err(Error::corrupt(
                &current,
                0,
                format!("names manifest {id}, the engine appends to {}", m.id()),
            ));
        }
        let bytes = storage.read(&path).map_err(Error::io("read", &path))?;
        let replayed = manifest::replay(&bytes, id)
            .map_err(|(at, reason)| Error::corrupt(&path, at, reason))?;
        r.manifest_bytes = replayed.valid_len;
        r.manifest_torn_tail = replayed.torn_tail.map(|(at, _)| at);
        let in_memory = live_set(m.state());
        r.store_changed = read_only && live_set(&replayed.state) != in_memory;
        if live_set(&replayed.state) != in_memory && !r.store_changed {
            return Err(Error::corrupt(
                &path,
                replayed.valid_len,
                "the replayed live segments differ from the engine's",
            ));
        }
        let in_version: BTreeSet<(u8, u64)> = version
            .all()
            .map(|(level, s)| (u8::try_from(level).unwrap_or(u8::MAX), s.info.id))
            .collect();
        if in_version != in_memory {
            return Err(Error::corrupt(
                &path,
                replayed.valid_len,
                "the live version's files differ from the manifest's",
            ));
        }
        drop(m);
        check_levels(&path, &version)?;
        r.level_files = version.levels.iter().map(|l| l.len() as u64).collect();
        Ok(version)
    }

    /// Step 4: every WAL segment replayed.
    fn verify_wal(&self, r: &mut VerifyReport) -> Result<()> {
        let storage = &*self.core().options.storage;
        let dir = self.dir().join(WAL_DIR);
        // Synced lengths before the files: a writer records a length only once the segment
        // is that long, and segments only grow, so every length read here is within the
        // file read after it. Read the other way round, a rotation in between would record
        // a length past the bytes read: a false loss.
        let tracked = self.core().lock_manifest().state().clone();
        let synced = |id| tracked.wal.get(&id).copied().flatten();
        let lost = |first, last| wal_tracking::recorded_lost(&tracked, first, last);
        let mut files = Vec::new();
        for id in self.core().wal.segment_ids() {
            let path = memforest_wal::segment::path(&dir, id);
            match storage.read(&path) {
                Ok(bytes) => files.push((id, bytes)),
                // Purged after the flush that made it obsolete, since the listing.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("read", &path)(e)),
            }
        }
        let images: Vec<SegmentImage<'_>> = files
            .iter()
            .map(|(id, bytes)| SegmentImage { id: *id, bytes })
            .collect();
        let p = plan(&images, RecoveryMode::TolerateCorruptedTail, &synced, &lost)?;
        r.wal_files = files.len() as u64;
        r.wal_batches = p.batches.len() as u64;
        Ok(())
    }
}

/// `(level, id)` of every live segment a manifest state lists.
fn live_set(state: &ManifestState) -> BTreeSet<(u8, u64)> {
    state.segments.iter().map(|(l, s)| (*l, s.id)).collect()
}

/// Each file's key and seqno ranges are ordered; levels from 1 on are sorted by smallest
/// key and no two files of a level overlap (mini-lsm issue 62: levels came back unsorted after replay).
fn check_levels(manifest: &Path, version: &Version) -> Result<()> {
    for (level, files) in version.levels.iter().enumerate() {
        for seg in files {
            let i = &seg.info;
            if i.smallest > i.largest || i.min_seqno > i.max_seqno {
                return Err(Error::corrupt(
                    manifest,
                    0,
                    format!(
                        "segment {} at level {level}: inverted key or seqno range",
                        i.id
                    ),
                ));
            }
        }
        if level == 0 {
            continue;
        }
        for pair in files.windows(2) {
            if let [a, b] = pair {
                if a.info.largest >= b.info.smallest {
                    return Err(Error::corrupt(
                        manifest,
                        0,
                        format!(
                            "level {level}: segment {} ends at or after segment {} starts \
                             (unsorted or overlapping)",
                            a.info.id, b.info.id
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Step 3 for one file.
fn check_segment(
    storage: &dyn memforest_io::Storage,
    dir: &Path,
    seg: &Segment,
    r: &mut VerifyReport,
) -> Result<()> {
    let info = &seg.info;
    // Opens the file (fetching a cached store's evicted copy whole) and keeps the copy
    // while it is checked.
    let _pinned = seg.reader_for(Fetch::Whole)?;
    let path = dir.join(memforest_sst::file_name(info.id));
    crate::version::check_listed(storage, &path, info)?;
    let mismatch = |offset: u64, reason: String| Error::corrupt(&path, offset, reason);
    let reader = SstReader::open_with(storage, &path)?;
    let mut it = reader.iter()?;
    it.seek_to_first()?;
    let (mut count, mut first, mut last) = (0u64, None, None);
    while let Some(e) = it.next_entry()? {
        count += 1;
        first.get_or_insert_with(|| e.user_key.clone());
        last = Some(e.user_key);
    }
    let keys_match =
        first.as_deref() == Some(&info.smallest[..]) && last.as_deref() == Some(&info.largest[..]);
    if count != info.entry_count || !keys_match {
        return Err(mismatch(
            0,
            format!(
                "holds {count} entries from {first:02x?} to {last:02x?}, the manifest records \
                 {} from {:02x?} to {:02x?}",
                info.entry_count, info.smallest, info.largest
            ),
        ));
    }
    r.segment_files += 1;
    r.segment_bytes += info.file_size;
    r.entries += count;
    Ok(())
}
