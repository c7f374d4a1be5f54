//! Opening a segment file and point lookups.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use memforest_codec::checksum::crc32;
use memforest_codec::serde_codec;
use memforest_io::{ImmutableFile, Storage};

use crate::bloom::{BloomFilter, FilterLayout};
use crate::budgets::ReadBudgets;
use crate::descriptors::Descriptor;
use crate::error::{Result, SstError};
use crate::file::{fetched, Access, Backing, TableFile};
use crate::filter_scope::{self, FilterScope};
use crate::footer::{Footer, FOOTER_LEN};
use crate::index::Index;
use crate::internal_key::{self, Kind};
use crate::iter::SstIterator;
use crate::mmap;
use crate::properties::Properties;
use crate::range_read::{Prefetched, RangeRead};
use crate::residency::Tracked;
use crate::scan::{ScanIterator, ScanOptions};
use crate::source::EntrySource;

/// Bytes [`SstReader::open_ranged`] reads from the end of a file at open: enough for the
/// footer, properties, filter and top-level index of most files in one request.
pub const OPEN_TAIL_LEN: u64 = 256 << 10;

/// What a point lookup found: the newest version of the key at the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The key has this value, written at `seqno`: a slice of the file mapping, or of the
    /// block's copy when it was read with `pread` or stored compressed.
    Put {
        /// The value.
        value: Bytes,
        /// Its sequence number.
        seqno: u64,
    },
    /// The key was deleted at `seqno`; older files must not be consulted.
    Tombstone {
        /// The tombstone's sequence number.
        seqno: u64,
    },
}

/// An open, verified segment file (mini-lsm `SsTable`). Cheap to clone; all clones,
/// iterators and returned values share one read-only mapping, which is unmapped when the
/// last of them is dropped. A reader opened under [`ReadBudgets`] reads the data block of
/// a point lookup with `pread` through the budgets' [`crate::DescriptorTable`] instead
/// when the residency budget does not admit the block's pages (once the budget has had to
/// release, for pages not charged already; see that module's docs), if the table grants
/// it a descriptor.
///
/// Open checks the footer (magic, version, CRC, index levels, handles inside the file) and
/// loads the properties, filter and (top-level) index blocks with their CRCs verified; every
/// data block is CRC-checked each time it is loaded, and each index partition the first
/// time it is used (it is then remembered as verified).
///
/// The bloom filter and the top-level index are held on the heap for the reader's life,
/// outside any [`crate::Residency`] budget (RocksDB's default, `cache_index_and_filter_blocks =
/// false`): a point read probes the filter of every file it may find the key in, so a
/// budget that released filters would fault them back in after each release. They cost `bits_per_key / 8` bytes
/// per key (1.25 bytes at the default 10 bits) plus about one key per index partition. (The
/// filter is copied out of the mapping only for a file under a budget; an untracked mapping
/// or in-memory file is never released, so its filter stays a view of it.) A file whose
/// filter has a scope ([`crate::filter_scope`]) holds only the keys the scope includes;
/// its reader consults that filter only once given the same scope
/// ([`SstReader::with_filter_scope`]).
#[derive(Debug, Clone)]
pub struct SstReader {
    inner: Arc<Inner>,
    /// The scope [`SstReader::get`] consults a scoped filter under.
    scope: Option<Arc<dyn FilterScope>>,
}

#[derive(Debug)]
struct Inner {
    file: Arc<TableFile>,
    index: Index,
    /// A heap copy when the file is under a budget, so probing it never faults a released
    /// page back in.
    filter: BloomFilter,
    /// The id of the scope the filter was built under ([`filter_scope::EVERY_KEY`]: all keys).
    filter_scope: u32,
    properties: Properties,
}

impl SstReader {
    /// Maps and verifies the segment file at `path`.
    ///
    /// # Errors
    /// [`SstError::Io`] when the file cannot be opened or mapped; [`SstError::Corrupt`]
    /// naming the offset when any check fails.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(&*memforest_io::default_storage(), path)
    }

    /// [`SstReader::open`] through `storage`: an OS file is mapped read-only, a file the
    /// storage holds in memory is used as it is.
    ///
    /// # Errors
    /// As [`SstReader::open`].
    pub fn open_with(storage: &dyn Storage, path: impl AsRef<Path>) -> Result<Self> {
        Self::open_tracked(storage, path, None)
    }

    /// [`SstReader::open_with`] under `budgets`: the file's mapped pages are kept under
    /// its [`crate::Residency`] byte budget (every block read through the mapping is
    /// charged to it, the metadata blocks read at open included; the filter is then a heap
    /// copy), and a point lookup whose data block the budget does not admit reads it with
    /// `pread` through a descriptor of its [`crate::DescriptorTable`] (opened on first
    /// need, by path; none is kept from this open). A file the storage holds in memory
    /// uses neither.
    ///
    /// # Errors
    /// As [`SstReader::open`].
    pub fn open_tracked(
        storage: &dyn Storage,
        path: impl AsRef<Path>,
        budgets: Option<&ReadBudgets>,
    ) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let io = |op| {
            let path = path.clone();
            move |source| SstError::Io { op, path, source }
        };
        match storage.open_immutable(&path).map_err(io("open"))? {
            ImmutableFile::Os(file) => {
                let (data, mapping) = mmap::map_readonly(&file).map_err(io("mmap"))?;
                let (tracked, descriptor) = budgets.map_or((None, None), |b| {
                    (
                        Some(b.residency.track(mapping, data.len() as u64)),
                        Some(b.descriptors.register(path.clone(), &file)),
                    )
                });
                Self::from_parts(path, data, tracked, descriptor)
            }
            ImmutableFile::Bytes(bytes) => Self::from_bytes(path, bytes),
        }
    }

    /// Verifies and opens a file image already in memory (tools, tests and fuzzing; `open`
    /// is this over a mapping). `path` only labels errors.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] naming the offset when any check fails.
    pub fn from_bytes(path: PathBuf, data: Bytes) -> Result<Self> {
        Self::from_parts(path, data, None, None)
    }

    fn from_parts(
        path: PathBuf,
        data: Bytes,
        tracked: Option<Arc<Tracked>>,
        descriptor: Option<Arc<Descriptor>>,
    ) -> Result<Self> {
        let footer = footer_of(&path, &data, 0)?;
        let releasable = tracked.is_some();
        let blocks_end = data.len().saturating_sub(FOOTER_LEN) as u64;
        let file = Arc::new(TableFile::new(
            path,
            Backing::Whole(data),
            blocks_end,
            tracked,
            descriptor,
        ));
        Self::from_file(&file, Arc::clone(&file), &footer, releasable)
    }

    /// Opens a file read by range from `source` (an object in an object store); `path`
    /// labels errors. The open reads the file's tail (the last [`OPEN_TAIL_LEN`] bytes, and the
    /// bytes before them down to the first metadata block when the metadata is larger) with
    /// at most two [`RangeRead::read_once`] calls, and verifies the footer, properties,
    /// filter and top-level index from it; the filter and index are then held on the heap
    /// and the tail dropped. Every later block (index partitions, data blocks) is one
    /// [`RangeRead::read_block`] call, its CRC checked each time.
    ///
    /// # Errors
    /// [`SstError::Fetch`] naming the offset when a read fails; [`SstError::Corrupt`]
    /// naming the offset when any check fails.
    pub fn open_ranged(path: PathBuf, source: Arc<dyn RangeRead>) -> Result<Self> {
        let size = source.size();
        let tail_at = size.saturating_sub(OPEN_TAIL_LEN);
        let read = |at: u64, until: u64| {
            let len = usize::try_from(until - at).unwrap_or(usize::MAX);
            fetched(&path, source.read_once(at, len), at, len)
        };
        let tail = read(tail_at, size)?;
        let footer = footer_of(&path, &tail, tail_at)?;
        let meta_at = footer
            .index
            .offset
            .min(footer.filter.offset)
            .min(footer.properties.offset);
        let (at, bytes) = if meta_at < tail_at {
            let mut whole = bytes::BytesMut::from(read(meta_at, tail_at)?);
            whole.extend_from_slice(&tail);
            (meta_at, whole.freeze())
        } else {
            (tail_at, tail)
        };
        let prefetched = Prefetched {
            source: Arc::clone(&source),
            at,
            bytes,
        };
        let meta = Arc::new(TableFile::ranged(path.clone(), Arc::new(prefetched)));
        let file = Arc::new(TableFile::ranged(path, source));
        Self::from_file(&meta, file, &footer, true)
    }

    /// Verifies and loads the metadata of `file` (read through `meta`, `file` or a view of
    /// it holding the metadata) that `footer` describes. `copy_filter`: hold the filter in
    /// an allocation of its own rather than a view of the bytes it was read from.
    fn from_file(
        meta: &Arc<TableFile>,
        file: Arc<TableFile>,
        footer: &Footer,
        copy_filter: bool,
    ) -> Result<Self> {
        let blocks_end = file.size().saturating_sub(FOOTER_LEN as u64);
        if footer.properties.end_with_trailer() != Some(blocks_end) {
            return Err(file.corrupt(blocks_end, "properties block does not end at the footer"));
        }
        let properties: Properties =
            serde_codec::decode(&meta.read_payload(footer.properties, Access::Mapped)?.bytes)
                .map_err(|e| file.corrupt(footer.properties.offset + e.offset as u64, e.reason))?;
        if properties.format_version != footer.version {
            return Err(file.corrupt(
                footer.properties.offset,
                "properties format version differs from the footer's",
            ));
        }
        let layout = FilterLayout::for_format_version(footer.version).ok_or_else(|| {
            file.corrupt(blocks_end + 37, "no filter layout for the format version")
        })?;
        let stored = meta.read_payload(footer.filter, Access::Mapped)?;
        let (filter_scope, stored_bits) = filter_scope::decode(stored.bytes, footer.version)
            .map_err(|reason| file.corrupt(footer.filter.offset, reason))?;
        let bits = if copy_filter && !stored.compressed {
            Bytes::copy_from_slice(&stored_bits)
        } else {
            stored_bits
        };
        let filter = BloomFilter::new(bits, layout)
            .map_err(|reason| file.corrupt(footer.filter.offset, reason))?;
        let index = Index::open(meta, &file, footer.index, footer.index_levels)?;
        Ok(Self {
            inner: Arc::new(Inner {
                file,
                index,
                filter,
                filter_scope,
                properties,
            }),
            scope: None,
        })
    }

    /// This reader with `scope` as the rule its lookups read a scoped filter under: a file
    /// built under the same scope (same id) answers a key the scope includes from its
    /// filter; every other lookup of a scoped file goes to the index. Files whose filter
    /// holds every key (format versions 1 and 2, or built without a scope) use their filter
    /// for every key whatever the reader's scope.
    #[must_use]
    pub fn with_filter_scope(mut self, scope: Option<Arc<dyn FilterScope>>) -> Self {
        self.scope = scope;
        self
    }

    /// Whether the file's filter holds `user_key` if the file does.
    fn filter_answers(&self, user_key: &[u8]) -> bool {
        match self.inner.filter_scope {
            filter_scope::EVERY_KEY => true,
            id => self
                .scope
                .as_ref()
                .is_some_and(|s| s.id().get() == id && s.includes(user_key)),
        }
    }

    /// The file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        self.inner.file.path()
    }

    /// The file's size in bytes.
    #[must_use]
    pub fn file_size(&self) -> u64 {
        self.inner.file.size()
    }

    /// Whether anything besides this handle reads the file: another clone of this reader,
    /// or an iterator or block cursor over it. Values handed out by lookups are not
    /// counted: they are slices of the mapping, which stays valid after the file is
    /// unlinked (the inode lives until the last mapping is gone). The engine's segment cache
    /// deletes a local file only while this is false and it holds the only handle, so no
    /// read in flight loses its file.
    #[must_use]
    pub fn in_use(&self) -> bool {
        // Partitions loaded before the count only raise the file's count: a load racing
        // this call errs towards "in use".
        let own = 1 + self.inner.index.file_refs();
        Arc::strong_count(&self.inner) > 1 || Arc::strong_count(&self.inner.file) > own
    }

    /// The file's properties block.
    #[must_use]
    pub fn properties(&self) -> &Properties {
        &self.inner.properties
    }

    /// CRC-32 of the whole file, to compare with [`crate::SstMeta::file_crc32`] when
    /// scrubbing (reads every page of the file; a ranged file is read whole).
    ///
    /// # Errors
    /// [`SstError::Fetch`] when a ranged file's read fails.
    pub fn file_crc32(&self) -> Result<u32> {
        self.inner.file.touch(0, self.file_size());
        Ok(crc32(&self.inner.file.all()?))
    }

    /// The newest version of `user_key` with `seqno <= snapshot_seqno`: the bloom filter
    /// first when it holds such keys (a miss answers `None` without touching the index),
    /// then the index, then one data block.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when a block on the way does not verify or decode.
    pub fn get(&self, user_key: &[u8], snapshot_seqno: u64) -> Result<Option<Lookup>> {
        if self.filter_answers(user_key) && !self.inner.filter.may_contain(user_key) {
            return Ok(None);
        }
        let target = internal_key::seek_key(user_key, snapshot_seqno);
        let mut index = self.inner.index.iter();
        index.seek(&target)?;
        if !index.valid() {
            return Ok(None);
        }
        let mut block = self.inner.file.load_block(index.handle()?, Access::Point)?;
        block.seek(&target)?;
        if !block.valid() || internal_key::user_key(block.key()) != user_key {
            return Ok(None);
        }
        let (_, seqno, kind) = internal_key::decode(block.key())
            .map_err(|reason| self.inner.file.corrupt(block.block_offset(), reason))?;
        Ok(Some(match kind {
            Kind::Put => Lookup::Put {
                value: block.value(),
                seqno,
            },
            Kind::Tombstone => Lookup::Tombstone { seqno },
        }))
    }

    /// A raw cursor over every entry (all versions, tombstones included), at the start.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when the first blocks do not verify.
    pub fn iter(&self) -> Result<SstIterator> {
        let mut it = SstIterator::new(self.inner.index.iter(), Arc::clone(&self.inner.file));
        it.seek_to_first()?;
        Ok(it)
    }

    /// A snapshot view of the file: range scan, seek, one version per key (see
    /// [`ScanIterator`]).
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when the first blocks do not verify.
    pub fn scan(&self, options: ScanOptions) -> Result<ScanIterator<SstIterator>> {
        ScanIterator::new(self.iter()?, options)
    }
}

/// The footer at the end of `tail`, the bytes of a file from byte `at` to its end.
fn footer_of(path: &Path, tail: &[u8], at: u64) -> Result<Footer> {
    let corrupt = |offset: u64, reason| SstError::Corrupt {
        path: path.to_path_buf(),
        offset,
        reason,
    };
    let footer_at = tail
        .len()
        .checked_sub(FOOTER_LEN)
        .ok_or_else(|| corrupt(0, "file shorter than the footer"))?;
    let abs = at + footer_at as u64;
    Footer::decode(tail.get(footer_at..).unwrap_or_default())
        .map_err(|e| corrupt(abs + e.offset as u64, e.reason))
}
