//! A mapped segment file: its path, its bytes, and checked block loading.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use crate::block::trailer::{self, CompressionType, TRAILER_LEN};
use crate::block::{compression, Block};
use crate::block_handle::BlockHandle;
use crate::error::{Result, SstError};
use crate::residency::Tracked;
use crate::table_block::TableBlockIter;

/// The bytes of one finished segment file (a read-only mapping shared through [`Bytes`]).
#[derive(Debug)]
pub struct TableFile {
    path: PathBuf,
    data: Bytes,
    /// Offset of the footer: every block (payload and trailer) lies before it.
    blocks_end: u64,
    /// The charge state of a mapping under a [`crate::Residency`] budget.
    tracked: Option<Arc<Tracked>>,
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
    /// Wraps the mapped bytes of `path`; `blocks_end` is where the footer starts.
    /// `tracked` charges its reads to a [`crate::Residency`] budget (None: untracked).
    #[must_use]
    pub fn new(path: PathBuf, data: Bytes, blocks_end: u64, tracked: Option<Arc<Tracked>>) -> Self {
        Self {
            path,
            data,
            blocks_end,
            tracked,
        }
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

    /// All bytes of the file.
    #[must_use]
    pub fn bytes(&self) -> &Bytes {
        &self.data
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
    /// [`SstError::Corrupt`] naming the block's offset (or its trailer's) on any failure.
    pub fn read_payload(&self, handle: BlockHandle) -> Result<Payload> {
        let out_of_file = || self.corrupt(handle.offset, "block handle points outside the file");
        let end = handle.end_with_trailer().ok_or_else(out_of_file)?;
        if end > self.blocks_end {
            return Err(out_of_file());
        }
        self.touch_block(handle);
        let start = usize::try_from(handle.offset).map_err(|_| out_of_file())?;
        let trailer_at = usize::try_from(end)
            .map_err(|_| out_of_file())?
            .saturating_sub(TRAILER_LEN);
        let stored = self.data.slice(start..trailer_at);
        let mut raw_trailer = [0u8; TRAILER_LEN];
        raw_trailer.copy_from_slice(
            self.data
                .get(trailer_at..trailer_at + TRAILER_LEN)
                .ok_or_else(out_of_file)?,
        );
        let kind = trailer::verify(&stored, raw_trailer)
            .map_err(|(at, reason)| self.corrupt(trailer_at as u64 + at as u64, reason))?;
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

    /// Reads the block at `handle` as an entry block and returns an unpositioned cursor.
    ///
    /// # Errors
    /// As [`Self::read_payload`], plus a malformed restart array.
    pub fn load_block(self: &Arc<Self>, handle: BlockHandle) -> Result<TableBlockIter> {
        let payload = self.read_payload(handle)?;
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
