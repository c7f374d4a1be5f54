//! A segment file: its path, its bytes, and checked block loading (through the mapping,
//! with `pread` through a [`crate::DescriptorTable`] for point lookups, or by range from a
//! [`RangeRead`] source).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use crate::block::trailer::{self, CompressionType, TRAILER_LEN};
use crate::block::{compression, Block};
use crate::block_handle::BlockHandle;
use crate::descriptors::Descriptor;
use crate::error::{Result, SstError};
use crate::footer::FOOTER_LEN;
use crate::range_read::RangeRead;
use crate::residency::Tracked;
use crate::table_block::TableBlockIter;

/// Where a file's bytes are.
#[derive(Debug)]
pub enum Backing {
    /// All of them: a read-only mapping shared through [`Bytes`], or an image in memory.
    Whole(Bytes),
    /// A source read by range, block by block.
    Ranged(Arc<dyn RangeRead>),
}

/// The bytes of one finished segment file.
#[derive(Debug)]
pub struct TableFile {
    path: PathBuf,
    data: Backing,
    /// Offset of the footer: every block (payload and trailer) lies before it.
    blocks_end: u64,
    /// The charge state of a mapping under a [`crate::Residency`] budget.
    tracked: Option<Arc<Tracked>>,
    /// The file's slot in a [`crate::DescriptorTable`], for [`Access::Point`] reads.
    descriptor: Option<Arc<Descriptor>>,
}

/// How a block is about to be read, which decides how its bytes are fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Through the mapping: index partitions (remembered as views of it) and the
    /// metadata blocks read at open.
    Mapped,
    /// An iterator's next data block: through the mapping (the next blocks share its pages
    /// and the kernel's readahead); from a ranged source, with the source free to fetch
    /// the blocks after it in the same request.
    Scan,
    /// One scattered block (a point lookup's data block): through the mapping when the
    /// residency budget admits it (its pages are charged already, or the budget has never
    /// had to release and has room for them), else copied with `pread` when the file has a
    /// descriptor slot and the table grants it a descriptor, else through the mapping.
    Point,
}

/// A block payload as loaded: verified, and decompressed when it was stored compressed.
#[derive(Debug)]
pub struct Payload {
    /// The uncompressed payload (a slice of the mapping unless it was compressed).
    pub bytes: Bytes,
    /// Whether it was stored compressed (offsets inside it then do not map to the file).
    pub compressed: bool,
}

impl TableFile {
    /// Wraps the bytes of `path`; `blocks_end` is where the footer starts. `tracked`
    /// charges its mapped reads to a [`crate::Residency`] budget (None: untracked);
    /// `descriptor` serves its [`Access::Point`] reads (None: the mapping). Both apply to a
    /// [`Backing::Whole`] file only.
    #[must_use]
    pub fn new(
        path: PathBuf,
        data: Backing,
        blocks_end: u64,
        tracked: Option<Arc<Tracked>>,
        descriptor: Option<Arc<Descriptor>>,
    ) -> Self {
        Self {
            path,
            data,
            blocks_end,
            tracked,
            descriptor,
        }
    }

    /// A file of `path` (a label for errors) read by range from `source`.
    #[must_use]
    pub fn ranged(path: PathBuf, source: Arc<dyn RangeRead>) -> Self {
        let blocks_end = source.size().saturating_sub(FOOTER_LEN as u64);
        Self::new(path, Backing::Ranged(source), blocks_end, None, None)
    }

    /// Charges a read of `len` bytes at `offset` to the residency budget, if any.
    pub fn touch(&self, offset: u64, len: u64) {
        if let Some(t) = &self.tracked {
            t.touch(offset, len);
        }
    }

    /// Charges a read of the block at `handle` (payload and trailer).
    pub fn touch_block(&self, handle: BlockHandle) {
        self.touch(handle.offset, u64::from(handle.size) + TRAILER_LEN as u64);
    }

    /// The file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length in bytes.
    #[must_use]
    pub fn size(&self) -> u64 {
        match &self.data {
            Backing::Whole(data) => data.len() as u64,
            Backing::Ranged(source) => source.size(),
        }
    }

    /// All bytes of the file (one read of the whole file when it is ranged).
    ///
    /// # Errors
    /// [`SstError::Fetch`] when the ranged read fails.
    pub fn all(&self) -> Result<Bytes> {
        match &self.data {
            Backing::Whole(data) => Ok(data.clone()),
            Backing::Ranged(source) => {
                let len = usize::try_from(source.size()).unwrap_or(usize::MAX);
                fetched(&self.path, source.read_once(0, len), 0, len)
            }
        }
    }

    /// A [`SstError::Corrupt`] for this file at absolute `offset`.
    #[must_use]
    pub fn corrupt(&self, offset: u64, reason: &'static str) -> SstError {
        SstError::Corrupt {
            path: self.path.clone(),
            offset,
            reason,
        }
    }

    /// Reads the block at `handle`: checks it lies before the footer, verifies the trailer
    /// CRC, and decompresses it if needed.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] naming the block's offset (or its trailer's) on any failure;
    /// [`SstError::Io`] when a `pread` fails; [`SstError::Fetch`] when a ranged read does.
    pub fn read_payload(&self, handle: BlockHandle, access: Access) -> Result<Payload> {
        let out_of_file = || self.corrupt(handle.offset, "block handle points outside the file");
        let end = handle.end_with_trailer().ok_or_else(out_of_file)?;
        if end > self.blocks_end {
            return Err(out_of_file());
        }
        let start = usize::try_from(handle.offset).map_err(|_| out_of_file())?;
        let len = usize::try_from(end - handle.offset).map_err(|_| out_of_file())?;
        let with_trailer = match &self.data {
            Backing::Whole(data) => match self.copied(handle.offset, len, access) {
                Some(copy) => copy?,
                None => {
                    self.touch_block(handle);
                    // In range: `end <= blocks_end`, which lies inside the mapping.
                    data.slice(start..start + len)
                }
            },
            Backing::Ranged(source) => fetched(
                &self.path,
                source.read_block(handle.offset, len, access == Access::Scan),
                handle.offset,
                len,
            )?,
        };
        let trailer_at = len.checked_sub(TRAILER_LEN).ok_or_else(out_of_file)?;
        let stored = with_trailer.slice(..trailer_at);
        let mut raw_trailer = [0u8; TRAILER_LEN];
        raw_trailer.copy_from_slice(with_trailer.get(trailer_at..).ok_or_else(out_of_file)?);
        let kind = trailer::verify(&stored, raw_trailer).map_err(|(at, reason)| {
            self.corrupt(handle.offset + trailer_at as u64 + at as u64, reason)
        })?;
        match kind {
            CompressionType::None => Ok(Payload {
                bytes: stored,
                compressed: false,
            }),
            CompressionType::Zstd => {
                let raw = compression::decompress(&stored)
                    .map_err(|reason| self.corrupt(handle.offset, reason))?;
                Ok(Payload {
                    bytes: Bytes::from(raw),
                    compressed: true,
                })
            }
        }
    }

    /// The `len` bytes at `offset` copied with `pread`, for an [`Access::Point`] read that
    /// the residency budget does not admit, of a file with a descriptor slot that gets a
    /// descriptor; None: read the mapping.
    fn copied(&self, offset: u64, len: usize, access: Access) -> Option<Result<Bytes>> {
        if access != Access::Point
            || self
                .tracked
                .as_ref()
                .is_none_or(|t| t.admits(offset, len as u64))
        {
            return None;
        }
        let read = self.descriptor.as_ref()?.read(offset, len)?;
        Some(read.map(Bytes::from).map_err(|source| SstError::Io {
            op: "pread",
            path: self.path.clone(),
            source,
        }))
    }

    /// Reads the block at `handle` as an entry block and returns an unpositioned cursor.
    ///
    /// # Errors
    /// As [`Self::read_payload`], plus a malformed restart array.
    pub fn load_block(
        self: &Arc<Self>,
        handle: BlockHandle,
        access: Access,
    ) -> Result<TableBlockIter> {
        let payload = self.read_payload(handle, access)?;
        let compressed = payload.compressed;
        match Block::new(payload.bytes) {
            Ok(block) => Ok(TableBlockIter::new(
                Arc::clone(self),
                handle,
                compressed,
                block,
            )),
            Err(e) => Err(self.corrupt(
                handle.offset + if compressed { 0 } else { e.offset as u64 },
                e.reason,
            )),
        }
    }
}

/// `read`, a ranged read of `len` bytes at `offset` of the file at `path`, checked for its
/// length.
///
/// # Errors
/// [`SstError::Fetch`] when it failed or returned another length.
pub(crate) fn fetched(
    path: &Path,
    read: std::io::Result<Bytes>,
    offset: u64,
    len: usize,
) -> Result<Bytes> {
    let fail = |source| SstError::Fetch {
        path: path.to_path_buf(),
        offset,
        len: len as u64,
        source,
    };
    let bytes = read.map_err(fail)?;
    if bytes.len() != len {
        return Err(fail(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the source returned {} bytes", bytes.len()),
        )));
    }
    Ok(bytes)
}
