//! Appends blocks to a file being built, tracking the offset and the whole-file CRC-32.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use memforest_io::{Storage, WritableFile};

use crate::block::trailer::{self, CompressionType};
use crate::block_handle::BlockHandle;
use crate::error::{Result, SstError};

/// A buffered, checksummed, offset-tracking file writer.
#[derive(Debug)]
pub struct BlockWriter {
    out: BufWriter<Box<dyn WritableFile>>,
    path: PathBuf,
    offset: u64,
    crc: crc32fast::Hasher,
}

impl BlockWriter {
    /// Creates (or truncates) `path` in `storage` for writing.
    ///
    /// # Errors
    /// [`SstError::Io`] when the file cannot be created.
    pub fn create(storage: &dyn Storage, path: &Path) -> Result<Self> {
        let file = storage.create(path).map_err(|source| SstError::Io {
            op: "create",
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            out: BufWriter::with_capacity(1 << 20, file),
            path: path.to_path_buf(),
            offset: 0,
            crc: crc32fast::Hasher::new(),
        })
    }

    /// The file being written.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written so far.
    #[must_use]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Writes `payload` and its trailer; returns the block's handle.
    ///
    /// # Errors
    /// [`SstError::Io`] on a write failure; [`SstError::InvalidInput`] for a payload over
    /// 4 GiB.
    pub fn write_block(&mut self, payload: &[u8], kind: CompressionType) -> Result<BlockHandle> {
        let size = u32::try_from(payload.len()).map_err(|_| SstError::InvalidInput {
            path: self.path.clone(),
            reason: "block over 4 GiB",
        })?;
        let handle = BlockHandle {
            offset: self.offset,
            size,
        };
        self.write_raw(payload)?;
        self.write_raw(&trailer::encode(payload, kind))?;
        Ok(handle)
    }

    /// Writes bytes as they are.
    ///
    /// # Errors
    /// [`SstError::Io`] on a write failure.
    pub fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(|source| SstError::Io {
            op: "write",
            path: self.path.clone(),
            source,
        })?;
        self.crc.update(bytes);
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Flushes and fsyncs the file; returns the CRC-32 of everything written.
    ///
    /// # Errors
    /// [`SstError::Io`] when the flush or the fsync fails.
    pub fn finish(self) -> Result<u32> {
        let path = self.path;
        let file = self.out.into_inner().map_err(|e| SstError::Io {
            op: "flush",
            path: path.clone(),
            source: e.into_error(),
        })?;
        file.sync_all().map_err(|source| SstError::Io {
            op: "fsync",
            path,
            source,
        })?;
        Ok(self.crc.finalize())
    }
}
