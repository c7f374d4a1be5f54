//! The index: one entry per data block, mapping the block's last internal key to its
//! handle; two-level (partitions plus a top-level index over them, RocksDB
//! `kTwoLevelIndexSearch`) once it is larger than
//! [`crate::SstOptions::max_single_level_index_size`].
//!
//! Index blocks use the ordinary block layout with a restart point at every entry (RocksDB
//! `index_block_restart_interval = 1`); each value is a 12-byte [`BlockHandle`].

use std::cmp::Ordering;
use std::sync::{Arc, OnceLock};

use crate::block::builder::BlockBuilder;
use crate::block::trailer::CompressionType;
use crate::block_handle::BlockHandle;
use crate::error::{Result, SstError};
use crate::file::{Access, TableFile};
use crate::internal_key::compare_encoded;
use crate::table_block::TableBlockIter;
use crate::writer::BlockWriter;

/// Restart interval of index blocks.
const INDEX_RESTART_INTERVAL: usize = 1;

/// Collects index entries during a build and writes the index at the end.
#[derive(Debug, Default)]
pub struct IndexBuilder {
    entries: Vec<(Vec<u8>, BlockHandle)>,
}

/// Where the written index is.
#[derive(Debug, Clone, Copy)]
pub struct WrittenIndex {
    /// The top-level index block.
    pub handle: BlockHandle,
    /// 1 or 2.
    pub levels: u8,
}

impl IndexBuilder {
    /// Records a data block whose last encoded key is `last_key`.
    pub fn add(&mut self, last_key: &[u8], handle: BlockHandle) {
        self.entries.push((last_key.to_vec(), handle));
    }

    /// Writes the index (partitions first, then the top level when two-level).
    ///
    /// # Errors
    /// As [`BlockWriter::write_block`].
    pub fn finish(
        &self,
        out: &mut BlockWriter,
        partition_size: usize,
        max_single_level: usize,
    ) -> Result<WrittenIndex> {
        let single = self.block_of(self.entries.iter().map(|(k, h)| (k.as_slice(), *h)), out)?;
        if single.len() <= max_single_level {
            let handle = out.write_block(&single, CompressionType::None)?;
            return Ok(WrittenIndex { handle, levels: 1 });
        }
        let mut top = Vec::new();
        let mut partition = BlockBuilder::new(INDEX_RESTART_INTERVAL);
        for (i, (key, handle)) in self.entries.iter().enumerate() {
            add(&mut partition, key, *handle, out)?;
            if partition.estimated_len() >= partition_size || i + 1 == self.entries.len() {
                let written = out.write_block(&partition.finish(), CompressionType::None)?;
                top.push((key.as_slice(), written));
            }
        }
        let top = self.block_of(top.into_iter(), out)?;
        let handle = out.write_block(&top, CompressionType::None)?;
        Ok(WrittenIndex { handle, levels: 2 })
    }

    fn block_of<'a>(
        &self,
        entries: impl Iterator<Item = (&'a [u8], BlockHandle)>,
        out: &BlockWriter,
    ) -> Result<Vec<u8>> {
        let mut block = BlockBuilder::new(INDEX_RESTART_INTERVAL);
        for (key, handle) in entries {
            add(&mut block, key, handle, out)?;
        }
        Ok(block.finish())
    }
}

fn add(block: &mut BlockBuilder, key: &[u8], handle: BlockHandle, out: &BlockWriter) -> Result<()> {
    block
        .add(key, &handle.encode())
        .map_err(|reason| SstError::InvalidInput {
            path: out.path().to_path_buf(),
            reason,
        })
}

/// The index of an open file. The top-level block is verified and decoded at open into a
/// sorted array of `(last key, handle)`; in a two-level index each partition is
/// CRC-checked the first time it is used and then remembered for the reader's lifetime
/// (index blocks are never compressed, so a remembered partition is a view of the mapping,
/// not a copy).
#[derive(Debug, Clone)]
pub struct Index {
    inner: Arc<IndexInner>,
}

#[derive(Debug)]
struct IndexInner {
    file: Arc<TableFile>,
    /// Entries of the top-level block, in key order.
    top: Vec<(Vec<u8>, BlockHandle)>,
    /// One slot per top-level entry when two-level; empty when one-level.
    partitions: Vec<OnceLock<TableBlockIter>>,
}

impl Index {
    /// Loads, verifies and decodes the top-level index block through `meta` (`file`, or
    /// a view of it holding its metadata in memory), then reads partitions from `file`.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when it does not verify or decode.
    pub fn open(
        meta: &Arc<TableFile>,
        file: &Arc<TableFile>,
        handle: BlockHandle,
        levels: u8,
    ) -> Result<Self> {
        let mut block = meta.load_block(handle, Access::Mapped)?;
        block.seek_to_first()?;
        let mut top = Vec::new();
        while block.valid() {
            top.push((block.key().to_vec(), block.handle_value()?));
            block.advance()?;
        }
        let partitions = if levels == 2 {
            top.iter().map(|_| OnceLock::new()).collect()
        } else {
            Vec::new()
        };
        Ok(Self {
            inner: Arc::new(IndexInner {
                file: Arc::clone(file),
                top,
                partitions,
            }),
        })
    }

    /// How many handles on the file this index holds: its own, plus one per index
    /// partition loaded so far.
    #[must_use]
    pub fn file_refs(&self) -> usize {
        1 + self
            .inner
            .partitions
            .iter()
            .filter(|p| p.get().is_some())
            .count()
    }

    /// An unpositioned cursor over the data block handles.
    #[must_use]
    pub fn iter(&self) -> IndexIter {
        IndexIter {
            index: Arc::clone(&self.inner),
            pos: usize::MAX,
            partition: None,
        }
    }
}

impl IndexInner {
    fn two_level(&self) -> bool {
        !self.partitions.is_empty()
    }

    /// Partition `pos` (unpositioned), verified on first use.
    fn partition(&self, pos: usize) -> Result<Option<TableBlockIter>> {
        let (Some(slot), Some((_, handle))) = (self.partitions.get(pos), self.top.get(pos)) else {
            return Ok(None);
        };
        if let Some(cached) = slot.get() {
            self.file.touch_block(*handle);
            return Ok(Some(cached.clone()));
        }
        let loaded = self.file.load_block(*handle, Access::Mapped)?;
        // A concurrent first use may have stored an identical block already.
        let _ = slot.set(loaded.clone());
        Ok(Some(loaded))
    }
}

/// A cursor over the data block handles, in key order.
#[derive(Debug)]
pub struct IndexIter {
    index: Arc<IndexInner>,
    /// Position in the top-level entries (`>= len` when exhausted).
    pos: usize,
    /// The current partition, when two-level.
    partition: Option<TableBlockIter>,
}

impl IndexIter {
    /// True when positioned on a data block.
    #[must_use]
    pub fn valid(&self) -> bool {
        if self.index.two_level() {
            self.partition.as_ref().is_some_and(TableBlockIter::valid)
        } else {
            self.pos < self.index.top.len()
        }
    }

    /// The current data block's handle.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when the entry is not a handle (or the cursor is not valid).
    pub fn handle(&self) -> Result<BlockHandle> {
        match &self.partition {
            Some(partition) if partition.valid() => partition.handle_value(),
            _ => self
                .index
                .top
                .get(self.pos)
                .filter(|_| !self.index.two_level())
                .map(|(_, handle)| *handle)
                .ok_or_else(|| self.index.file.corrupt(0, "index cursor is not positioned")),
        }
    }

    /// Positions on the first data block.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when an index partition does not verify or decode.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.pos = 0;
        self.enter_partition(None)
    }

    /// Positions on the first data block whose last key is `>= target` (encoded).
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when an index partition does not verify or decode.
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.pos = self
            .index
            .top
            .partition_point(|(key, _)| compare_encoded(key, target) == Ordering::Less);
        self.enter_partition(Some(target))
    }

    /// Advances to the next data block.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when an index partition does not verify or decode.
    pub fn advance(&mut self) -> Result<()> {
        match &mut self.partition {
            Some(partition) => {
                partition.advance()?;
                if !partition.valid() {
                    self.pos = self.pos.saturating_add(1);
                    self.enter_partition(None)?;
                }
                Ok(())
            }
            None => {
                self.pos = self.pos.saturating_add(1);
                Ok(())
            }
        }
    }

    /// In a two-level index, positions in partition `pos` (at `target` or its start),
    /// moving on past partitions with no such entry.
    fn enter_partition(&mut self, mut target: Option<&[u8]>) -> Result<()> {
        self.partition = None;
        if !self.index.two_level() {
            return Ok(());
        }
        while let Some(mut partition) = self.index.partition(self.pos)? {
            match target {
                Some(t) => partition.seek(t)?,
                None => partition.seek_to_first()?,
            }
            if partition.valid() {
                self.partition = Some(partition);
                return Ok(());
            }
            target = None;
            self.pos = self.pos.saturating_add(1);
        }
        Ok(())
    }
}
