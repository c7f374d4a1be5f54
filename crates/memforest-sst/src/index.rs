//! The index: one entry per data block, mapping the block's last internal key to its
//! handle; two-level (partitions plus a top-level index over them, RocksDB
//! `kTwoLevelIndexSearch`) once it is larger than
//! [`crate::SstOptions::max_single_level_index_size`].
//!
//! Index blocks use the ordinary block layout with a restart point at every entry (RocksDB
//! `index_block_restart_interval = 1`); each value is a 12-byte [`BlockHandle`].

use std::sync::Arc;

use crate::block::builder::BlockBuilder;
use crate::block::trailer::CompressionType;
use crate::block_handle::BlockHandle;
use crate::error::{Result, SstError};
use crate::file::TableFile;
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

/// The index of an open file: the verified top-level block.
#[derive(Debug, Clone)]
pub struct Index {
    top: TableBlockIter,
    levels: u8,
}

impl Index {
    /// Loads and verifies the top-level index block.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when it does not verify.
    pub fn open(file: &Arc<TableFile>, handle: BlockHandle, levels: u8) -> Result<Self> {
        Ok(Self {
            top: file.load_block(handle)?,
            levels,
        })
    }

    /// An unpositioned cursor over the data block handles.
    #[must_use]
    pub fn iter(&self) -> IndexIter {
        IndexIter {
            top: self.top.clone(),
            partition: None,
            two_level: self.levels == 2,
        }
    }
}

/// A cursor over the data block handles, in key order.
#[derive(Debug)]
pub struct IndexIter {
    top: TableBlockIter,
    partition: Option<TableBlockIter>,
    two_level: bool,
}

impl IndexIter {
    /// True when positioned on a data block.
    #[must_use]
    pub fn valid(&self) -> bool {
        self.current().is_some_and(TableBlockIter::valid)
    }

    fn current(&self) -> Option<&TableBlockIter> {
        if self.two_level {
            self.partition.as_ref()
        } else {
            Some(&self.top)
        }
    }

    /// The current data block's handle.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when the entry is not a handle (or the cursor is not valid).
    pub fn handle(&self) -> Result<BlockHandle> {
        match self.current() {
            Some(it) if it.valid() => it.handle_value(),
            _ => Err(self
                .top
                .file()
                .corrupt(self.top.block_offset(), "index cursor is not positioned")),
        }
    }

    /// Positions on the first data block.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when an index block does not verify or decode.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.top.seek_to_first()?;
        self.enter_partition(None)
    }

    /// Positions on the first data block whose last key is `>= target` (encoded).
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when an index block does not verify or decode.
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.top.seek(target)?;
        self.enter_partition(Some(target))
    }

    /// Advances to the next data block.
    ///
    /// # Errors
    /// [`SstError::Corrupt`] when an index block does not verify or decode.
    pub fn advance(&mut self) -> Result<()> {
        match &mut self.partition {
            Some(partition) if self.two_level => {
                partition.advance()?;
                if !partition.valid() {
                    self.top.advance()?;
                    self.enter_partition(None)?;
                }
                Ok(())
            }
            _ => self.top.advance(),
        }
    }

    /// In a two-level index, loads the partition under the top cursor and positions in it
    /// (at `target` or its start), moving on past partitions with no such entry.
    fn enter_partition(&mut self, mut target: Option<&[u8]>) -> Result<()> {
        if !self.two_level {
            return Ok(());
        }
        loop {
            if !self.top.valid() {
                self.partition = None;
                return Ok(());
            }
            let mut partition = self.top.file().load_block(self.top.handle_value()?)?;
            match target {
                Some(t) => partition.seek(t)?,
                None => partition.seek_to_first()?,
            }
            if partition.valid() {
                self.partition = Some(partition);
                return Ok(());
            }
            target = None;
            self.top.advance()?;
        }
    }
}
