//! Raw iteration over every entry of one file.

use std::sync::Arc;

use crate::cursor::EntryCursor;
use crate::error::Result;
use crate::file::{Access, TableFile};
use crate::index::IndexIter;
use crate::internal_key::{self, Entry, EntryRef};
use crate::source::EntrySource;
use crate::table_block::TableBlockIter;

/// Every entry of one segment file in internal-key order, all versions and tombstones
/// included (wrap it in a [`crate::ScanIterator`] for a snapshot view). Each data block is
/// CRC-checked when the cursor enters it. Holds the file mapping alive.
#[derive(Debug)]
pub struct SstIterator {
    index: IndexIter,
    block: Option<TableBlockIter>,
    file: Arc<TableFile>,
}

impl SstIterator {
    pub(crate) fn new(index: IndexIter, file: Arc<TableFile>) -> Self {
        Self {
            index,
            block: None,
            file,
        }
    }

    /// Loads the data block under the index cursor (or clears it at the end) and positions
    /// it at `target` or at its start.
    fn enter_block(&mut self, target: Option<&[u8]>) -> Result<()> {
        self.block = None;
        if !self.index.valid() {
            return Ok(());
        }
        let mut block = self.file.load_block(self.index.handle()?, Access::Scan)?;
        match target {
            Some(t) => block.seek(t)?,
            None => block.seek_to_first()?,
        }
        self.block = Some(block);
        Ok(())
    }
}

impl SstIterator {
    /// Moves past exhausted data blocks: true once the block cursor stands on an entry,
    /// false at the end of the file.
    fn settle(&mut self) -> Result<bool> {
        loop {
            match &self.block {
                None => return Ok(false),
                Some(block) if block.valid() => return Ok(true),
                Some(_) => {
                    self.index.advance()?;
                    self.enter_block(None)?;
                }
            }
        }
    }
}

impl EntrySource for SstIterator {
    fn seek_to_first(&mut self) -> Result<()> {
        self.index.seek_to_first()?;
        self.enter_block(None)
    }

    fn seek(&mut self, user_key: &[u8], seqno: u64) -> Result<()> {
        let target = internal_key::seek_key(user_key, seqno);
        self.index.seek(&target)?;
        self.enter_block(Some(&target))
    }

    fn next_entry(&mut self) -> Result<Option<Entry>> {
        if !self.settle()? {
            return Ok(None);
        }
        let Some(block) = &mut self.block else {
            return Ok(None);
        };
        let entry = block.entry()?;
        block.advance()?;
        Ok(Some(entry))
    }
}

impl EntryCursor for SstIterator {
    fn peek(&mut self) -> Result<Option<EntryRef<'_>>> {
        if !self.settle()? {
            return Ok(None);
        }
        self.block
            .as_ref()
            .map(TableBlockIter::entry_ref)
            .transpose()
    }

    fn skip(&mut self) -> Result<()> {
        if !self.settle()? {
            return Ok(());
        }
        match &mut self.block {
            Some(block) => block.advance(),
            None => Ok(()),
        }
    }
}
