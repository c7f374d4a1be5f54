//! [`Version`]: the set of live segment files, by level, shared copy-on-write.
//!
//! Readers clone an `Arc<Version>`; flushes and compactions install a new one. Each file is
//! an `Arc<Segment>` shared by every version that lists it; a segment replaced by a
//! compaction is marked obsolete and its file is unlinked when the last version (and so the
//! last `SstReader` the engine holds) referencing it is dropped: the deletion contract of
//! `memforest-sst`. Iterators or values still alive keep the mapping after the unlink.

use std::borrow::Cow;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use memforest_io::Storage;
use memforest_sst::{
    BoxedSource, FilterScope, Kind, LastUse, Lookup, ReadBudgets, SstMeta, SstOptions, SstReader,
};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::cache::SegmentCache;
use crate::error::Result;
use crate::level_cursor::LevelCursor;
use crate::remote_file::RemoteFile;

/// The reason of the [`crate::Error::Corrupt`] for a listed segment file that is missing
/// (a read-only open that races a writer's compaction retries on it: `open::vanished`).
pub(crate) const MISSING_SEGMENT: &str = "segment file listed in the manifest is missing: its \
    entries are lost unless it is restored (`memforest repair` rebuilds the manifest from the \
    files present and reports it lost)";

/// Checks that segment file `path`, which a manifest lists as `info`, is there with the
/// length the manifest records: a lost file or one replaced by another (a swap, a copy
/// from elsewhere) is refused at open instead of serving a partial history.
///
/// # Errors
/// [`crate::Error::Corrupt`] naming the file: missing (restore it, or `memforest repair`
/// rebuilds the manifest from the files present and reports it lost), or its length and
/// the recorded one; [`crate::Error::Io`] when it cannot be measured.
pub(crate) fn check_listed(
    storage: &dyn memforest_io::Storage,
    path: &Path,
    info: &SegmentInfo,
) -> crate::Result<()> {
    let len = match storage.file_len(path) {
        Ok(len) => len,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(crate::Error::corrupt(path, 0, MISSING_SEGMENT))
        }
        Err(e) => return Err(crate::Error::io("stat", path)(e)),
    };
    if len != info.file_size {
        return Err(crate::Error::corrupt(
            path,
            len.min(info.file_size),
            format!(
                "file is {len} bytes, the manifest records {}",
                info.file_size
            ),
        ));
    }
    Ok(())
}

/// What the manifest records about one segment file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentInfo {
    /// File id (`{id:020}.sst`).
    pub id: u64,
    /// File size in bytes.
    pub file_size: u64,
    /// Smallest engine key.
    pub smallest: Vec<u8>,
    /// Largest engine key.
    pub largest: Vec<u8>,
    /// Smallest seqno.
    pub min_seqno: u64,
    /// Largest seqno.
    pub max_seqno: u64,
    /// Entries (all versions, tombstones included).
    pub entry_count: u64,
}

impl From<&SstMeta> for SegmentInfo {
    fn from(m: &SstMeta) -> Self {
        Self {
            id: m.id,
            file_size: m.file_size,
            smallest: m.smallest_user_key.to_vec(),
            largest: m.largest_user_key.to_vec(),
            min_seqno: m.min_seqno,
            max_seqno: m.max_seqno,
            entry_count: m.entry_count,
        }
    }
}

impl SegmentInfo {
    /// True when the file may hold keys in `[lower, upper]` (bounds on engine keys).
    #[must_use]
    pub fn overlaps(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
        let above_lower = match lower {
            Bound::Included(l) => self.largest.as_slice() >= l,
            Bound::Excluded(l) => self.largest.as_slice() > l,
            Bound::Unbounded => true,
        };
        let below_upper = match upper {
            Bound::Included(u) => self.smallest.as_slice() <= u,
            Bound::Excluded(u) => self.smallest.as_slice() < u,
            Bound::Unbounded => true,
        };
        above_lower && below_upper
    }
}

/// How a read of a cached segment whose directory has no copy reaches the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// By range, block by block (point reads and scans).
    Blocks,
    /// Whole, into a local copy (compaction and `verify`, which read every byte).
    Whole,
}

/// A live segment file: its manifest record and, once opened, its reader. A store without
/// a [`SegmentCache`] opens every file when it lists it; a store with one opens a file on
/// its first read: its local copy, or when the directory has none, the object by range
/// (or fetched whole, for a read of every byte: [`Fetch::Whole`]); the cache may later
/// close the copy and delete it (see [`crate::cache`]).
#[derive(Debug)]
pub struct Segment {
    /// Its manifest record.
    pub info: SegmentInfo,
    /// Its reader for good: a segment of a store without a cache, opened when listed
    /// (reads borrow it, with no lock on the read path).
    fixed: Option<SstReader>,
    /// A cached segment's reader while its local copy is open; the lock is held through a
    /// fetch, so one read fetches and the others racing it wait.
    reader: Mutex<Option<SstReader>>,
    /// A cached segment's reader of the object by range, once a read needed it while the
    /// directory had no copy (kept for the segment's life: its metadata is on the heap).
    ranged: Mutex<Option<SstReader>>,
    obsolete: AtomicBool,
    /// Whether the object store holds the file (a cached copy may then be deleted).
    uploaded: AtomicBool,
    /// The cache's clock at its last read.
    last_use: AtomicU64,
    /// Where the file lives (to open it, and delete it once obsolete).
    path: PathBuf,
    storage: Arc<dyn Storage>,
    budgets: ReadBudgets,
    scope: Option<Arc<dyn FilterScope>>,
    cache: Option<Arc<SegmentCache>>,
}

impl Segment {
    /// Opens segment `info.id` in `dir` under `budgets` (its mapped pages charged to the
    /// residency budget, its point lookups reading through the descriptor table), its
    /// filter read under `sst`'s filter scope.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when the file is missing or its length is not the one
    /// the manifest records (a lost or replaced file); [`crate::Error::Sst`] when it is
    /// corrupt (naming file and offset).
    pub fn open(
        storage: &Arc<dyn Storage>,
        budgets: &ReadBudgets,
        sst: &SstOptions,
        dir: &Path,
        info: SegmentInfo,
    ) -> Result<Self> {
        let seg = Self::closed(storage, budgets, sst, dir, info, None, false);
        check_listed(&**storage, &seg.path, &seg.info)?;
        let mut seg = seg;
        seg.fixed = Some(seg.open_reader()?);
        Ok(seg)
    }

    /// Segment `info.id` of `dir` as a member of `cache`: opened now when the directory
    /// has a copy, else on its first read. `uploaded`: whether the object store holds the
    /// file already (else [`Segment::mark_uploaded`] once it does).
    ///
    /// # Errors
    /// [`crate::Error::Sst`] when the copy in the directory is corrupt.
    pub(crate) fn cached(
        storage: &Arc<dyn Storage>,
        budgets: &ReadBudgets,
        sst: &SstOptions,
        dir: &Path,
        info: SegmentInfo,
        cache: &Arc<SegmentCache>,
        uploaded: bool,
    ) -> Result<Arc<Self>> {
        let cache = Arc::clone(cache);
        let seg = Arc::new(Self::closed(
            storage,
            budgets,
            sst,
            dir,
            info,
            Some(Arc::clone(&cache)),
            uploaded,
        ));
        cache.add(&seg);
        if storage.file_len(&seg.path).is_ok() {
            *seg.reader.lock() = Some(seg.open_reader()?);
            cache.opened(seg.info.file_size);
        }
        Ok(seg)
    }

    fn closed(
        storage: &Arc<dyn Storage>,
        budgets: &ReadBudgets,
        sst: &SstOptions,
        dir: &Path,
        info: SegmentInfo,
        cache: Option<Arc<SegmentCache>>,
        uploaded: bool,
    ) -> Self {
        Self {
            path: dir.join(memforest_sst::file_name(info.id)),
            info,
            fixed: None,
            reader: Mutex::new(None),
            ranged: Mutex::new(None),
            obsolete: AtomicBool::new(false),
            uploaded: AtomicBool::new(uploaded),
            last_use: AtomicU64::new(0),
            storage: Arc::clone(storage),
            budgets: budgets.clone(),
            scope: sst.filter_scope.clone(),
            cache,
        }
    }

    fn open_reader(&self) -> memforest_sst::Result<SstReader> {
        Ok(
            SstReader::open_tracked(&*self.storage, &self.path, Some(&self.budgets))?
                .with_filter_scope(self.scope.clone()),
        )
    }

    /// The file's reader for a read of some of its blocks (point reads and scans): the
    /// local copy's when it is open, else a reader of the object by range (opened on
    /// first need; see [`crate::cache`]), or for a file no larger than
    /// [`memforest_sst::OPEN_TAIL_LEN`] a local copy fetched whole.
    ///
    /// # Errors
    /// [`memforest_sst::SstError::Fetch`] when a ranged read fails: nothing changes, and a
    /// later read tries again; [`memforest_sst::SstError`] when the file does not open.
    pub fn reader(&self) -> memforest_sst::Result<Cow<'_, SstReader>> {
        self.reader_for(Fetch::Blocks)
    }

    /// The file's reader, `fetch` deciding how a cached segment whose directory has no
    /// copy is read. A local copy fetched whole stays while the returned reader or an
    /// iterator over it lives.
    ///
    /// # Errors
    /// As [`Segment::reader`]; [`memforest_sst::SstError::Io`] (operation `"fetch"`) when
    /// a whole download fails.
    pub fn reader_for(&self, fetch: Fetch) -> memforest_sst::Result<Cow<'_, SstReader>> {
        if let Some(reader) = &self.fixed {
            return Ok(Cow::Borrowed(reader));
        }
        let mut slot = self.reader.lock();
        if let Some(cache) = &self.cache {
            cache.touch(self);
        }
        if let Some(reader) = &*slot {
            return Ok(Cow::Owned(reader.clone()));
        }
        if let Some(cache) = &self.cache {
            // A file no larger than the tail a ranged open reads is fetched whole: the same
            // bytes in one request, and no request for its blocks after.
            if fetch == Fetch::Blocks && self.info.file_size > memforest_sst::OPEN_TAIL_LEN {
                drop(slot);
                return self.ranged_reader(cache).map(Cow::Owned);
            }
            let dir = self.path.parent().unwrap_or_else(|| Path::new(""));
            cache
                .fetch(&*self.storage, dir, self.info.id)
                .map_err(|e| memforest_sst::SstError::Io {
                    op: "fetch",
                    path: self.path.clone(),
                    source: std::io::Error::other(e),
                })?;
        }
        let reader = self.open_reader()?;
        *slot = Some(reader.clone());
        drop(slot);
        if let Some(cache) = &self.cache {
            cache.opened(self.info.file_size);
        }
        Ok(Cow::Owned(reader))
    }

    /// The reader of the object by range, opened if it is not.
    fn ranged_reader(&self, cache: &Arc<SegmentCache>) -> memforest_sst::Result<SstReader> {
        let mut slot = self.ranged.lock();
        if let Some(reader) = &*slot {
            return Ok(reader.clone());
        }
        let file = RemoteFile::new(Arc::clone(cache), self.info.id, self.info.file_size);
        let reader = SstReader::open_ranged(PathBuf::from(file.label()), Arc::new(file))?
            .with_filter_scope(self.scope.clone());
        *slot = Some(reader.clone());
        Ok(reader)
    }

    /// Records that the object store holds the file.
    pub(crate) fn mark_uploaded(&self) {
        self.uploaded.store(true, Ordering::Release);
    }

    /// Closes the file and deletes its local copy when the object store holds it and no
    /// read holds it (a segment being fetched or read right now is skipped).
    pub(crate) fn evict(&self) {
        if !self.uploaded.load(Ordering::Acquire) {
            return;
        }
        let Some(mut slot) = self.reader.try_lock() else {
            return;
        };
        if slot.as_ref().is_none_or(SstReader::in_use) {
            return;
        }
        if self.storage.remove_file(&self.path).is_err() {
            return;
        }
        *slot = None;
        if let Some(cache) = &self.cache {
            cache.closed(self.info.file_size);
        }
    }

    /// Marks the file for deletion once no version references it.
    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, Ordering::Release);
    }
}

impl LastUse for Segment {
    fn last_use(&self) -> &AtomicU64 {
        &self.last_use
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        let open = self.reader.get_mut().take().is_some();
        if let Some(cache) = &self.cache {
            if open {
                cache.closed(self.info.file_size);
            }
            cache.blocks().forget(self.info.id);
        }
        if self.obsolete.load(Ordering::Acquire) {
            // Best effort: a file left behind is an orphan, removed at the next open.
            let _ = self.storage.remove_file(&self.path);
        }
    }
}

/// The live files by level (mini-lsm `LsmStorageState`, RocksDB `Version`). Level 0 is
/// ordered newest first (its files may overlap); every other level is ordered by smallest
/// key and its files do not overlap.
#[derive(Debug, Clone)]
pub struct Version {
    /// `levels[i]`: files of level `i`.
    pub levels: Vec<Vec<Arc<Segment>>>,
}

impl Version {
    /// An empty version of `num_levels` levels.
    #[must_use]
    pub fn empty(num_levels: usize) -> Self {
        Self {
            levels: vec![Vec::new(); num_levels],
        }
    }

    /// Builds a version from `(level, segment)` pairs, sorting each level.
    #[must_use]
    pub fn from_segments(num_levels: usize, segments: Vec<(usize, Arc<Segment>)>) -> Self {
        let mut v = Self::empty(num_levels);
        for (level, seg) in segments {
            if let Some(l) = v.levels.get_mut(level) {
                l.push(seg);
            }
        }
        v.sort();
        v
    }

    fn sort(&mut self) {
        for (i, level) in self.levels.iter_mut().enumerate() {
            if i == 0 {
                level.sort_by_key(|s| std::cmp::Reverse(s.info.max_seqno));
            } else {
                level.sort_by(|a, b| a.info.smallest.cmp(&b.info.smallest));
            }
        }
    }

    /// This version plus a new level-0 file.
    #[must_use]
    pub fn with_l0(&self, seg: Arc<Segment>) -> Self {
        let mut v = self.clone();
        if let Some(l0) = v.levels.first_mut() {
            l0.insert(0, seg);
        }
        v
    }

    /// This version with the files `inputs` removed and `outputs` added at `level`.
    #[must_use]
    pub fn with_compaction(
        &self,
        inputs: &[u64],
        level: usize,
        outputs: Vec<Arc<Segment>>,
    ) -> Self {
        let mut v = self.clone();
        for l in &mut v.levels {
            l.retain(|s| !inputs.contains(&s.info.id));
        }
        if let Some(l) = v.levels.get_mut(level) {
            l.extend(outputs);
        }
        v.sort();
        v
    }

    /// The level holding file `id`, if it is live.
    #[must_use]
    pub fn level_of(&self, id: u64) -> Option<usize> {
        self.levels
            .iter()
            .position(|l| l.iter().any(|s| s.info.id == id))
    }

    /// Every `(level, segment)`.
    pub fn all(&self) -> impl Iterator<Item = (usize, &Arc<Segment>)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.iter().map(move |s| (i, s)))
    }

    /// Total bytes of `level`.
    #[must_use]
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels
            .get(level)
            .map_or(0, |l| l.iter().map(|s| s.info.file_size).sum())
    }

    /// The newest version of `key` with seqno `<= snapshot`: `(seqno, kind, value)`.
    ///
    /// # Errors
    /// Corruption of a file on the way.
    pub fn get(&self, key: &[u8], snapshot: u64) -> Result<Option<(u64, Kind, Bytes)>> {
        for (i, level) in self.levels.iter().enumerate() {
            if i == 0 {
                for seg in level {
                    if let Some(found) = lookup(seg, key, snapshot)? {
                        return Ok(Some(found));
                    }
                }
            } else {
                let at = level.partition_point(|s| s.info.largest.as_slice() < key);
                if let Some(seg) = level.get(at) {
                    if let Some(found) = lookup(seg, key, snapshot)? {
                        return Ok(Some(found));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Cursors over the files that may hold keys in `[lower, upper]`, newest first: one per
    /// level-0 file, one [`LevelCursor`] per deeper level (a level's files share no user
    /// key). Files are opened when a cursor reaches them.
    ///
    /// # Errors
    /// Corruption of a level-0 file's first block.
    pub fn sources(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Result<Vec<BoxedSource>> {
        let mut out: Vec<BoxedSource> = Vec::new();
        let Some((l0, deeper)) = self.levels.split_first() else {
            return Ok(out);
        };
        for seg in l0.iter().filter(|s| s.info.overlaps(lower, upper)) {
            out.push(Box::new(seg.reader()?.iter()?));
        }
        for level in deeper {
            let files: Vec<Arc<Segment>> = level
                .iter()
                .filter(|s| s.info.overlaps(lower, upper))
                .cloned()
                .collect();
            if !files.is_empty() {
                out.push(Box::new(LevelCursor::new(files, Fetch::Blocks)));
            }
        }
        Ok(out)
    }
}

fn lookup(seg: &Segment, key: &[u8], snapshot: u64) -> Result<Option<(u64, Kind, Bytes)>> {
    if key < seg.info.smallest.as_slice() || key > seg.info.largest.as_slice() {
        return Ok(None);
    }
    Ok(seg.reader()?.get(key, snapshot)?.map(|l| match l {
        Lookup::Put { value, seqno } => (seqno, Kind::Put, value),
        Lookup::Tombstone { seqno } => (seqno, Kind::Tombstone, Bytes::new()),
    }))
}
