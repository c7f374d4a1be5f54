//! A cursor over one block of a mapped file, whose errors name the file and offset.

use std::sync::Arc;

use bytes::Bytes;
use memforest_codec::DecodeError;

use crate::block::iter::BlockIter;
use crate::block::Block;
use crate::block_handle::BlockHandle;
use crate::error::{Result, SstError};
use crate::file::TableFile;
use crate::internal_key::{self, Entry, EntryRef};

/// [`BlockIter`] over a block of `file`, comparing keys as internal keys and turning decode
/// errors into [`SstError::Corrupt`] (absolute offsets for uncompressed blocks; the block's
/// offset for compressed ones).
#[derive(Debug, Clone)]
pub struct TableBlockIter {
    file: Arc<TableFile>,
    handle: BlockHandle,
    compressed: bool,
    iter: BlockIter,
}

impl TableBlockIter {
    /// An unpositioned cursor over `block`, read from `file` at `handle`.
    #[must_use]
    pub fn new(file: Arc<TableFile>, handle: BlockHandle, compressed: bool, block: Block) -> Self {
        Self {
            file,
            handle,
            compressed,
            iter: BlockIter::new(block),
        }
    }

    /// Offset of the block in the file.
    #[must_use]
    pub fn block_offset(&self) -> u64 {
        self.handle.offset
    }

    fn error(&self, e: DecodeError) -> SstError {
        let inner = if self.compressed { 0 } else { e.offset as u64 };
        self.file.corrupt(self.handle.offset + inner, e.reason)
    }

    /// True when positioned on an entry.
    #[must_use]
    pub fn valid(&self) -> bool {
        self.iter.valid()
    }

    /// The current encoded key (meaningful only when valid).
    #[must_use]
    pub fn key(&self) -> &[u8] {
        self.iter.key()
    }

    /// The current value (meaningful only when valid).
    #[must_use]
    pub fn value(&self) -> Bytes {
        self.iter.value()
    }

    /// Positions on the first entry.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when it does not decode.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.iter.seek_to_first().map_err(|e| self.error(e))
    }

    /// Positions on the first entry whose internal key is `>= target` (encoded).
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when an entry on the way does not decode.
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.iter
            .seek(target, internal_key::compare_encoded)
            .map_err(|e| self.error(e))
    }

    /// Advances to the next entry.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when it does not decode.
    pub fn advance(&mut self) -> Result<()> {
        self.iter.advance().map_err(|e| self.error(e))
    }

    /// The current entry with its key decoded.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when the key has no valid trailer.
    pub fn entry(&self) -> Result<Entry> {
        let e = self.entry_ref()?;
        Ok(Entry {
            user_key: Bytes::copy_from_slice(e.user_key),
            seqno: e.seqno,
            kind: e.kind,
            value: self.value(),
        })
    }

    /// The current entry, borrowed from the cursor.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when the key has no valid trailer.
    pub fn entry_ref(&self) -> Result<EntryRef<'_>> {
        let (user_key, seqno, kind) = internal_key::decode(self.key())
            .map_err(|reason| self.file.corrupt(self.handle.offset, reason))?;
        Ok(EntryRef {
            user_key,
            seqno,
            kind,
            value: self.iter.value_slice(),
        })
    }

    /// The current value read as a block handle (index entries).
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when the value is not a 12-byte handle.
    pub fn handle_value(&self) -> Result<BlockHandle> {
        BlockHandle::decode(&self.value())
            .map_err(|e| self.file.corrupt(self.handle.offset, e.reason))
    }
}
