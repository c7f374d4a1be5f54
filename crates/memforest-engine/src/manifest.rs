//! The manifest: an append-only log of [`Edit`]s describing the live segment files, plus
//! `CURRENT`, which names the manifest in use.
//!
//! Each manifest record is one commit: a format version byte ([`FORMAT_VERSION`]) followed
//! by a `Vec<Edit>` encoded with the pinned bincode configuration
//! (`memforest_codec::serde_codec`), framed with the WAL's block format
//! ([`memforest_wal::LogWriter`], log number = the manifest's file id) and made durable with
//! `fdatasync` before the engine acts on it. A new manifest starts with a snapshot of the
//! whole state (RocksDB `VersionEdit`s written by `WriteSnapshot`); `CURRENT` is swapped to
//! it atomically (temporary file, fsync, rename, fsync of the directory). See
//! `docs/format/engine.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memforest_codec::checksum::{crc32, mask, unmask};
use memforest_codec::serde_codec;
use memforest_io::{Storage, WritableFile};
use memforest_wal::{Damage, LogReader, LogWriter, RecordKind};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::remote::Publisher;
use crate::version::SegmentInfo;

/// Version byte before every encoded record. Version 2 added the WAL-tracking edits
/// ([`Edit::WalCreated`], [`Edit::WalSealed`], [`Edit::WalDeleted`]) and
/// [`Edit::Obsolete`]; version 1 records (the same encoding without them) are still read.
pub const FORMAT_VERSION: u8 = 2;

/// The oldest record version [`decode_record`] reads.
const OLDEST_READABLE_VERSION: u8 = 1;

/// Name of the file naming the current manifest.
pub const CURRENT: &str = "CURRENT";

/// One change to the engine's durable state (RocksDB `VersionEdit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Edit {
    /// A segment file was added at `level` (a flush adds at level 0).
    NewSegment {
        /// Its level.
        level: u8,
        /// Its record.
        segment: SegmentInfo,
    },
    /// Segment `id` is no longer live.
    DeleteSegment {
        /// File id.
        id: u64,
    },
    /// A compaction replaced `inputs` with `outputs` (`(level, segment)` pairs).
    Compaction {
        /// File ids removed.
        inputs: Vec<u64>,
        /// Files added.
        outputs: Vec<(u8, SegmentInfo)>,
    },
    /// Every write with seqno `<= up_to` is in segment files: WAL replay skips it and its
    /// WAL segments may be purged.
    WalObsolete {
        /// Last flushed seqno.
        up_to: u64,
    },
    /// File ids below this were allocated.
    NextIds {
        /// Next unused file id.
        next_file_id: u64,
    },
    /// WAL segment `id` was created and may hold acknowledged writes (RocksDB
    /// `WalAddition`): until [`Edit::WalDeleted`] names it, an open that does not find it
    /// refuses.
    WalCreated {
        /// WAL segment id.
        id: u64,
    },
    /// WAL segment `id` was closed and synced at `size` bytes (or a salvage open cut it
    /// to `size` bytes, below what was recorded before): an open that finds it shorter
    /// refuses.
    WalSealed {
        /// WAL segment id.
        id: u64,
        /// Synced length in bytes.
        size: u64,
    },
    /// WAL segments `ids` are deleted (purged after a flush, or dropped by a recovery
    /// mode), recorded before they are unlinked (RocksDB `WalDeletion`).
    WalDeleted {
        /// WAL segment ids.
        ids: Vec<u64>,
    },
    /// Segment files `ids` are no longer live and may still be on disk (their deletion
    /// waits for readers): a manifest snapshot carries them, so an open after a crash
    /// still knows they are garbage.
    Obsolete {
        /// File ids.
        ids: Vec<u64>,
    },
}

/// The state a manifest describes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestState {
    /// Live segments and their levels, in no particular order.
    pub segments: Vec<(u8, SegmentInfo)>,
    /// Last seqno persisted in segment files.
    pub flushed_seqno: u64,
    /// Next unused file id.
    pub next_file_id: u64,
    /// Live WAL segments: id -> synced length once sealed (`None` while it may still be
    /// written).
    pub wal: BTreeMap<u64, Option<u64>>,
    /// True once any WAL edit was read: a manifest written before WAL tracking existed
    /// (format version 1) tracks nothing, and its WAL is not checked against it.
    pub wal_tracked: bool,
    /// Segment file ids this manifest removed from the live set: a file with such an id
    /// is garbage, provably (ids are never reused).
    pub obsolete: BTreeSet<u64>,
}

impl ManifestState {
    /// Applies one edit; `Err` names what is inconsistent.
    ///
    /// # Errors
    /// A reason string for an edit that does not fit the state (unknown or duplicate id).
    pub fn apply(&mut self, edit: &Edit) -> Result<(), &'static str> {
        match edit {
            Edit::NewSegment { level, segment } => self.add(*level, segment)?,
            Edit::DeleteSegment { id } => self.remove(*id)?,
            Edit::Compaction { inputs, outputs } => {
                for &id in inputs {
                    self.remove(id)?;
                }
                for (level, segment) in outputs {
                    self.add(*level, segment)?;
                }
            }
            Edit::WalObsolete { up_to } => self.flushed_seqno = self.flushed_seqno.max(*up_to),
            Edit::NextIds { next_file_id } => {
                self.next_file_id = self.next_file_id.max(*next_file_id);
            }
            Edit::WalCreated { id } => {
                self.wal_tracked = true;
                self.wal.entry(*id).or_insert(None);
            }
            Edit::WalSealed { id, size } => {
                self.wal_tracked = true;
                self.wal.insert(*id, Some(*size));
            }
            Edit::WalDeleted { ids } => {
                self.wal_tracked = true;
                // A purge whose unlink a crash interrupted is recorded again: idempotent.
                for id in ids {
                    self.wal.remove(id);
                }
            }
            Edit::Obsolete { ids } => self.obsolete.extend(ids),
        }
        Ok(())
    }

    fn add(&mut self, level: u8, segment: &SegmentInfo) -> Result<(), &'static str> {
        if self.segments.iter().any(|(_, s)| s.id == segment.id) {
            return Err("segment added twice");
        }
        self.next_file_id = self.next_file_id.max(segment.id + 1);
        self.segments.push((level, segment.clone()));
        Ok(())
    }

    fn remove(&mut self, id: u64) -> Result<(), &'static str> {
        let before = self.segments.len();
        self.segments.retain(|(_, s)| s.id != id);
        if self.segments.len() == before {
            return Err("removal of a segment that is not live");
        }
        self.obsolete.insert(id);
        Ok(())
    }

    /// The edits that recreate this state from nothing (a manifest snapshot).
    #[must_use]
    pub fn snapshot(&self) -> Vec<Edit> {
        let mut edits: Vec<Edit> = self
            .segments
            .iter()
            .map(|(level, segment)| Edit::NewSegment {
                level: *level,
                segment: segment.clone(),
            })
            .collect();
        edits.push(Edit::WalObsolete {
            up_to: self.flushed_seqno,
        });
        edits.push(Edit::NextIds {
            next_file_id: self.next_file_id,
        });
        for (&id, sealed) in &self.wal {
            edits.push(match sealed {
                Some(size) => Edit::WalSealed { id, size: *size },
                None => Edit::WalCreated { id },
            });
        }
        if self.wal_tracked && self.wal.is_empty() {
            edits.push(Edit::WalDeleted { ids: Vec::new() });
        }
        if !self.obsolete.is_empty() {
            edits.push(Edit::Obsolete {
                ids: self.obsolete.iter().copied().collect(),
            });
        }
        edits
    }
}

/// The file name of manifest `id`.
#[must_use]
pub fn file_name(id: u64) -> String {
    format!("MANIFEST-{id:06}")
}

/// Parses a manifest file name.
#[must_use]
pub fn parse_file_name(name: &str) -> Option<u64> {
    name.strip_prefix("MANIFEST-")?.parse().ok()
}

/// Encodes one record payload.
///
/// # Errors
/// [`Error::InvalidArgument`] if the edits do not encode (never for real edits).
pub fn encode_record(edits: &[Edit]) -> Result<Vec<u8>> {
    let body = serde_codec::encode(&edits.to_vec())
        .map_err(|_| Error::InvalidArgument("manifest edits do not encode"))?;
    let mut out = Vec::with_capacity(1 + body.len());
    out.push(FORMAT_VERSION);
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decodes one record payload; `Err((offset in payload, reason))`.
///
/// # Errors
/// A wrong version byte or bytes that are not a `Vec<Edit>`.
pub fn decode_record(payload: &[u8]) -> Result<Vec<Edit>, (usize, &'static str)> {
    match payload.split_first() {
        Some((&version, body)) if (OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) => {
            serde_codec::decode(body).map_err(|e| (1 + e.offset, "manifest edits do not decode"))
        }
        Some(_) => Err((0, "unknown manifest record version")),
        None => Err((0, "empty manifest record")),
    }
}

/// What replaying a manifest found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replayed {
    /// The state after every whole record.
    pub state: ManifestState,
    /// Byte offset just past the last whole record: where the next record goes.
    pub valid_len: u64,
    /// A damaged last record that was dropped as a torn append: its byte offset and what
    /// is wrong there. `None` when the file ends cleanly (possibly in zeros).
    pub torn_tail: Option<(u64, String)>,
}

/// Replays manifest bytes `data` of manifest `id` into a state.
///
/// Every manifest record is fdatasynced before the engine acts on it, so at most the last
/// record can be damaged by a crash (power loss during its append, before its sync
/// completed: cut short, zeroed sectors, sectors written out of order). Damage with no
/// valid record after it is therefore a torn tail: the replay stops before it and reports
/// it in [`Replayed::torn_tail`] (the WAL's `TolerateCorruptedTail`). Damage followed by a
/// valid record, and a whole record whose edits do not decode or do not fit the state, are
/// errors. A bit flip inside the last committed record is indistinguishable from a torn
/// append and is dropped the same way (as RocksDB's manifest recovery would fail instead;
/// see `docs/reliability.md`); the open then sets aside the segment files it cannot prove
/// are garbage. The first record is the snapshot that was synced before `CURRENT` named
/// the file, so a manifest without a whole first record (empty, cut short, damaged at
/// byte 0) is damage, never a torn append.
///
/// # Errors
/// A `(byte offset, reason)` pair for damage followed by a valid record, or for a whole
/// record that does not decode or apply.
pub fn replay(data: &[u8], id: u64) -> Result<Replayed, (u64, String)> {
    let mut out = Replayed::default();
    let mut damage: Option<Damage> = None;
    for item in LogReader::new(data, id) {
        let record = match (item, &damage) {
            (Err(d), None) => {
                damage = Some(d);
                continue;
            }
            (Err(_), Some(_)) => continue,
            (Ok(record), Some(first)) => {
                return Err((
                    first.offset,
                    format!(
                        "{}, followed by a valid record at byte {}",
                        first.reason, record.start
                    ),
                ))
            }
            (Ok(record), None) => record,
        };
        if record.kind != RecordKind::Data {
            return Err((record.start, "unexpected metadata record".into()));
        }
        let edits = decode_record(&record.payload)
            .map_err(|(at, reason)| (record.start, format!("{reason} (payload byte {at})")))?;
        for edit in &edits {
            out.state
                .apply(edit)
                .map_err(|reason| (record.start, reason.to_string()))?;
        }
        out.valid_len = record.end;
    }
    if out.valid_len == 0 {
        return Err(match damage {
            Some(d) => (
                d.offset,
                format!("{} in the first record (the snapshot)", d.reason),
            ),
            None => (
                0,
                "the manifest holds no record (its first record is the snapshot)".into(),
            ),
        });
    }
    out.torn_tail = damage.map(|d| (d.offset, d.reason.to_string()));
    Ok(out)
}

/// The manifest being appended to.
///
/// A manifest recovered at open ([`Manifest::load`]) is resumed without any I/O: the
/// database opens on a full disk. The first [`Manifest::append`] opens the file, cuts off
/// whatever follows the last whole record (a torn or zeroed tail: truncation frees space)
/// and makes that cut durable before writing.
#[derive(Debug)]
pub struct Manifest {
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    id: u64,
    /// Open for appending; `None` until the first append after a load, and again after a
    /// failed append (the next append then cuts the failed bytes off).
    file: Option<Box<dyn WritableFile>>,
    len: u64,
    state: ManifestState,
    /// Byte offset of the damaged last record [`Manifest::load`] dropped, if any.
    dropped_tail: Option<u64>,
    /// With an object-storage tier: uploads the segment files an append adds before the
    /// append, publishes the state after it.
    publisher: Option<Publisher>,
    /// A publication that failed after its append was durable: retried by the next append
    /// and by [`Manifest::publish_pending`].
    unpublished: bool,
}

impl Manifest {
    /// Writes manifest `id` holding a snapshot of `state`, makes it durable, and points
    /// `CURRENT` at it. The caller deletes the previous manifest file (if any).
    ///
    /// # Errors
    /// [`Error::Io`] on any failure (`CURRENT` then still names the previous manifest).
    pub fn create(
        storage: &Arc<dyn Storage>,
        dir: &Path,
        id: u64,
        state: ManifestState,
    ) -> Result<Self> {
        let path = dir.join(file_name(id));
        let file = storage
            .create_new(&path)
            .map_err(Error::io("create", &path))?;
        let mut m = Self {
            storage: Arc::clone(storage),
            dir: dir.to_path_buf(),
            id,
            file: Some(file),
            len: 0,
            state: ManifestState::default(),
            dropped_tail: None,
            publisher: None,
            unpublished: false,
        };
        m.append(&state.snapshot())?;
        set_current(&**storage, dir, id)?;
        Ok(m)
    }

    /// Reads `CURRENT` and replays the manifest it names, writing nothing; `None` for a
    /// directory without `CURRENT` (a new database). A torn last record is dropped (see
    /// [`replay`]) and cut off by the first append.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming `CURRENT` or the manifest and the byte offset; [`Error::Io`].
    pub fn load(storage: &Arc<dyn Storage>, dir: &Path) -> Result<Option<Self>> {
        let current = dir.join(CURRENT);
        let data = match storage.read(&current) {
            Ok(data) => data,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", &current)(e)),
        };
        let id =
            parse_current(&data).map_err(|(at, reason)| Error::corrupt(&current, at, reason))?;
        let path = dir.join(file_name(id));
        let bytes = storage.read(&path).map_err(Error::io("read", &path))?;
        let replayed =
            replay(&bytes, id).map_err(|(at, reason)| Error::corrupt(&path, at, reason))?;
        Ok(Some(Self {
            storage: Arc::clone(storage),
            dir: dir.to_path_buf(),
            id,
            file: None,
            len: replayed.valid_len,
            state: replayed.state,
            dropped_tail: replayed.torn_tail.map(|(at, _)| at),
            publisher: None,
            unpublished: false,
        }))
    }

    /// Opens the file for appending at the end of its last whole record: anything after it
    /// (a torn record, a zeroed tail, the bytes of a failed append) is cut off and the cut
    /// synced, so new records never follow damage.
    fn open_for_append(&self) -> Result<Box<dyn WritableFile>> {
        let path = self.path();
        let file = self
            .storage
            .open_append(&path)
            .map_err(Error::io("open", &path))?;
        let on_disk = file.current_len().map_err(Error::io("stat", &path))?;
        if on_disk != self.len {
            file.set_len(self.len)
                .map_err(Error::io("truncate", &path))?;
            file.sync_data().map_err(Error::io("fdatasync", &path))?;
        }
        Ok(file)
    }

    /// Appends one commit of `edits` and makes it durable. With an object-storage tier
    /// ([`Manifest::attach`]), the segment files the edits add are uploaded first (a failed
    /// upload fails the append, which records nothing), and the new state is published
    /// after (a failed publication is retried by the next append and by
    /// [`Manifest::publish_pending`]; only [`Error::Fenced`] fails the append then).
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::Corrupt`] if the edits do not fit the state (an engine bug);
    /// [`Error::Remote`] for a failed upload; [`Error::Fenced`].
    pub fn append(&mut self, edits: &[Edit]) -> Result<()> {
        let path = self.path();
        let mut next = self.state.clone();
        for edit in edits {
            next.apply(edit)
                .map_err(|reason| Error::corrupt(&path, self.len, reason))?;
        }
        if let Some(p) = &mut self.publisher {
            let dir = self.dir.clone();
            p.upload_added(&*self.storage, &dir, &self.state, edits)?;
        }
        let payload = encode_record(edits)?;
        let mut writer = LogWriter::resume(Vec::new(), self.id, self.len);
        writer
            .add_record(&payload)
            .map_err(Error::io("frame", &path))?;
        let len = writer.len();
        let bytes = writer.into_inner();
        let mut file = match self.file.take() {
            Some(file) => file,
            None => self.open_for_append()?,
        };
        file.write_all(&bytes).map_err(Error::io("write", &path))?;
        file.sync_data().map_err(Error::io("fdatasync", &path))?;
        self.file = Some(file);
        self.len = len;
        self.state = next;
        self.unpublished = true;
        match self.publish_pending() {
            Err(e @ Error::Fenced { .. }) => Err(e),
            _ => Ok(()),
        }
    }

    /// Hands the manifest its object-storage tier (a writer that claimed its epoch).
    pub fn attach(&mut self, publisher: Publisher) {
        self.publisher = Some(publisher);
        self.unpublished = false;
    }

    /// Moves the object-storage tier to `next` (a rewrite into a new manifest file), which
    /// publishes its state.
    ///
    /// # Errors
    /// [`Error::Fenced`]; [`Error::Remote`] (the publication is retried later).
    pub fn hand_over(&mut self, next: &mut Manifest) -> Result<()> {
        next.publisher = self.publisher.take();
        next.unpublished = true;
        next.publish_pending()
    }

    /// Publishes the state if an earlier publication failed (or none was made since the
    /// last append); a manifest without an object-storage tier has nothing to publish.
    ///
    /// # Errors
    /// [`Error::Fenced`]; [`Error::Remote`].
    pub fn publish_pending(&mut self) -> Result<()> {
        let Some(p) = &mut self.publisher else {
            return Ok(());
        };
        p.check()?;
        if self.unpublished {
            p.publish(&self.state)?;
            self.unpublished = false;
        }
        Ok(())
    }

    /// The object-storage tier, if attached.
    #[must_use]
    pub fn publisher(&self) -> Option<&Publisher> {
        self.publisher.as_ref()
    }

    /// Byte offset of the damaged last record that [`Manifest::load`] dropped as a torn
    /// append; `None` when the manifest ended cleanly or was created by this process.
    #[must_use]
    pub fn dropped_tail(&self) -> Option<u64> {
        self.dropped_tail
    }

    /// The state after every appended edit.
    #[must_use]
    pub fn state(&self) -> &ManifestState {
        &self.state
    }

    /// The manifest's file id.
    #[must_use]
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Bytes written.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when nothing was written.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The manifest file's path.
    #[must_use]
    pub fn path(&self) -> PathBuf {
        self.dir.join(file_name(self.id))
    }

    /// The storage the manifest lives in.
    #[must_use]
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }
}

/// The bytes of `CURRENT` naming manifest `id`: the file name, a newline, the masked
/// CRC-32 of the name as 8 lowercase hex digits, a newline.
#[must_use]
pub fn current_contents(id: u64) -> String {
    let name = file_name(id);
    format!("{name}\n{:08x}\n", mask(crc32(name.as_bytes())))
}

/// Parses and verifies `CURRENT`'s bytes; `Err((offset, reason))`.
///
/// # Errors
/// Anything but exactly the shape [`current_contents`] writes with a matching CRC.
pub fn parse_current(data: &[u8]) -> Result<u64, (u64, &'static str)> {
    let text = std::str::from_utf8(data).map_err(|e| (e.valid_up_to() as u64, "not UTF-8"))?;
    let (name, rest) = text
        .split_once('\n')
        .ok_or((0, "no newline after the name"))?;
    let crc_at = name.len() as u64 + 1;
    let crc_hex = rest
        .strip_suffix('\n')
        .ok_or((crc_at, "no newline after the CRC"))?;
    let stored = u32::from_str_radix(crc_hex, 16).map_err(|_| (crc_at, "CRC is not hex"))?;
    if crc_hex.len() != 8 || unmask(stored) != crc32(name.as_bytes()) {
        return Err((crc_at, "CRC mismatch"));
    }
    parse_file_name(name).ok_or((0, "not a manifest file name"))
}

/// Points `CURRENT` at manifest `id` atomically: temporary file, fsync, rename, fsync of
/// the directory.
///
/// # Errors
/// [`Error::Io`] on any failure.
pub fn set_current(storage: &dyn Storage, dir: &Path, id: u64) -> Result<()> {
    replace_file(storage, dir, CURRENT, current_contents(id).as_bytes())
}

/// Replaces file `name` in `dir` with `bytes` atomically: written to `<name>.tmp`,
/// fsynced, renamed over `name`, and the directory fsynced. A crash leaves the old file or
/// the new one, never a mix.
///
/// # Errors
/// [`Error::Io`] naming the temporary file; the old file then stands.
pub fn replace_file(storage: &dyn Storage, dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let mut f = storage.create(&tmp).map_err(Error::io("create", &tmp))?;
    f.write_all(bytes).map_err(Error::io("write", &tmp))?;
    f.sync_all().map_err(Error::io("fsync", &tmp))?;
    drop(f);
    storage
        .rename(&tmp, &dir.join(name))
        .map_err(Error::io("rename", &tmp))?;
    sync_dir(storage, dir)
}

/// fsyncs directory `dir`.
///
/// # Errors
/// [`Error::Io`].
pub fn sync_dir(storage: &dyn Storage, dir: &Path) -> Result<()> {
    storage.sync_dir(dir).map_err(Error::io("fsync dir", dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(id: u64) -> SegmentInfo {
        SegmentInfo {
            id,
            file_size: 10,
            smallest: b"a".to_vec(),
            largest: b"z".to_vec(),
            min_seqno: 1,
            max_seqno: 2,
            entry_count: 3,
        }
    }

    #[test]
    fn append_replay_and_current() {
        let dir = tempfile::tempdir().unwrap();
        let fs = memforest_io::default_storage();
        let mut m = Manifest::create(&fs, dir.path(), 7, ManifestState::default()).unwrap();
        m.append(&[Edit::NewSegment {
            level: 0,
            segment: seg(3),
        }])
        .unwrap();
        m.append(&[
            Edit::Compaction {
                inputs: vec![3],
                outputs: vec![(1, seg(4)), (1, seg(5))],
            },
            Edit::WalObsolete { up_to: 99 },
        ])
        .unwrap();
        let loaded = Manifest::load(&fs, dir.path()).unwrap().unwrap();
        assert_eq!(loaded.id(), 7);
        assert_eq!(loaded.state(), m.state());
        let state = loaded.state().clone();
        assert_eq!(state.flushed_seqno, 99);
        assert_eq!(state.next_file_id, 6);
        assert_eq!(state.segments.len(), 2);
        assert!(m.append(&[Edit::DeleteSegment { id: 3 }]).is_err());
    }

    #[test]
    fn current_is_verified() {
        let good = current_contents(12);
        assert_eq!(parse_current(good.as_bytes()), Ok(12));
        let bad = good.replace("MANIFEST-000012", "MANIFEST-000013");
        assert_eq!(parse_current(bad.as_bytes()).unwrap_err().1, "CRC mismatch");
        assert!(parse_current(b"").is_err());
        assert!(parse_current(b"\xff\xfe").is_err());
    }

    /// A manifest with three single-segment records; returns the storage, the directory's
    /// guard and the byte offset where each record starts.
    fn three_records() -> (Arc<dyn Storage>, tempfile::TempDir, Vec<u64>) {
        let dir = tempfile::tempdir().unwrap();
        let fs = memforest_io::default_storage();
        let mut m = Manifest::create(&fs, dir.path(), 1, ManifestState::default()).unwrap();
        let mut starts = Vec::new();
        for id in 10..13 {
            starts.push(m.len());
            m.append(&[Edit::NewSegment {
                level: 0,
                segment: seg(id),
            }])
            .unwrap();
        }
        (fs, dir, starts)
    }

    fn live(m: &Manifest) -> Vec<u64> {
        let mut ids: Vec<u64> = m.state().segments.iter().map(|(_, s)| s.id).collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn a_torn_last_record_is_dropped_and_cut_off_by_the_next_append() {
        let (fs, dir, starts) = three_records();
        let path = dir.path().join(file_name(1));
        let mut bytes = std::fs::read(&path).unwrap();
        let full = bytes.len() as u64;
        // Zero the last record's header (its sector never reached the disk) but keep its
        // payload: "zeroed bytes followed by non-zero data", with no valid record after.
        let last = usize::try_from(starts[2]).unwrap();
        bytes[last..last + 7].fill(0);
        std::fs::write(&path, &bytes).unwrap();
        let mut m = Manifest::load(&fs, dir.path()).unwrap().unwrap();
        assert_eq!(live(&m), vec![10, 11]);
        assert_eq!(m.len(), starts[2]);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            full,
            "load writes nothing"
        );
        m.append(&[Edit::DeleteSegment { id: 10 }]).unwrap();
        let again = Manifest::load(&fs, dir.path()).unwrap().unwrap();
        assert_eq!(live(&again), vec![11]);
        let replayed = replay(&std::fs::read(&path).unwrap(), 1).unwrap();
        assert_eq!(replayed.torn_tail, None, "the torn bytes were cut off");
    }

    #[test]
    fn damage_followed_by_a_valid_record_refuses_with_its_offset() {
        let (fs, dir, starts) = three_records();
        let path = dir.path().join(file_name(1));
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = usize::try_from(starts[1]).unwrap();
        bytes[middle + 9] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        match Manifest::load(&fs, dir.path()) {
            Err(Error::Corrupt {
                path: p, offset, ..
            }) => {
                assert_eq!(p, path);
                assert_eq!(offset, starts[1]);
            }
            other => panic!("expected corruption, got {other:?}"),
        }
    }
}
