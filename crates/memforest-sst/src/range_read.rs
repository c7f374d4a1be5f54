//! [`RangeRead`]: a segment file read by byte range on demand (an object in an object
//! store) rather than mapped whole, and [`Prefetched`], such a source with one range
//! already in memory (the metadata tail read at open).

use std::sync::Arc;

use bytes::Bytes;

/// A finished segment file whose bytes are read by range. `Send + Sync`: readers share it.
///
/// [`crate::SstReader::open_ranged`] reads the file's metadata with [`RangeRead::read_once`]
/// and every data block and index partition with [`RangeRead::read_block`], checking each
/// block's CRC whatever the source returns.
pub trait RangeRead: Send + Sync + std::fmt::Debug {
    /// The file's length in bytes.
    fn size(&self) -> u64;

    /// The `len` bytes at byte `offset`: one block with its trailer, which the source may
    /// keep to serve again. `scan`: an iterator reads it, and will likely read the blocks
    /// after it next (the source may fetch them in the same request).
    ///
    /// # Errors
    /// The source's error (a failed GET); the reader reports it as
    /// [`crate::SstError::Fetch`] naming the file, offset and length.
    fn read_block(&self, offset: u64, len: usize, scan: bool) -> std::io::Result<Bytes>;

    /// The `len` bytes at byte `offset`, read once (the metadata at open): not worth
    /// keeping.
    ///
    /// # Errors
    /// As [`RangeRead::read_block`].
    fn read_once(&self, offset: u64, len: usize) -> std::io::Result<Bytes>;
}

/// A [`RangeRead`] with bytes `at..at + bytes.len()` in memory: reads inside them are
/// slices of them, others go to the source.
#[derive(Debug)]
pub(crate) struct Prefetched {
    pub source: Arc<dyn RangeRead>,
    pub at: u64,
    pub bytes: Bytes,
}

impl Prefetched {
    fn held(&self, offset: u64, len: usize) -> Option<Bytes> {
        let start = usize::try_from(offset.checked_sub(self.at)?).ok()?;
        let end = start.checked_add(len)?;
        self.bytes.get(start..end)?;
        Some(self.bytes.slice(start..end))
    }
}

impl RangeRead for Prefetched {
    fn size(&self) -> u64 {
        self.source.size()
    }

    fn read_block(&self, offset: u64, len: usize, scan: bool) -> std::io::Result<Bytes> {
        match self.held(offset, len) {
            Some(bytes) => Ok(bytes),
            None => self.source.read_block(offset, len, scan),
        }
    }

    fn read_once(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        match self.held(offset, len) {
            Some(bytes) => Ok(bytes),
            None => self.source.read_once(offset, len),
        }
    }
}

/// A whole file image as a [`RangeRead`] (tests and tools).
impl RangeRead for Bytes {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_block(&self, offset: u64, len: usize, _scan: bool) -> std::io::Result<Bytes> {
        let start = usize::try_from(offset).map_err(std::io::Error::other)?;
        let end = start.saturating_add(len);
        if self.get(start..end).is_none() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "range past the end of the image",
            ));
        }
        Ok(self.slice(start..end))
    }

    fn read_once(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        self.read_block(offset, len, false)
    }
}
