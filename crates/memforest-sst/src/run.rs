//! In-memory sorted runs (a frozen memtable, a test fixture) as an [`EntrySource`].

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Result, SstError};
use crate::internal_key::Entry;
use crate::source::EntrySource;

/// Entries held in memory, strictly increasing in internal-key order. Cloning shares the
/// entries; each clone is an independent cursor.
#[derive(Debug, Clone)]
pub struct SortedRun {
    entries: Arc<[Entry]>,
    pos: usize,
}

impl SortedRun {
    /// A run over `entries`, positioned at the start.
    ///
    /// # Errors
    /// [`SstError::OutOfOrder`] (with an empty path) naming the first entry that is not
    /// strictly after its predecessor.
    pub fn new(entries: Vec<Entry>) -> Result<Self> {
        if let Some(i) = entries
            .windows(2)
            .position(|w| matches!(w, [a, b] if a.cmp_key(b).is_ge()))
        {
            return Err(SstError::OutOfOrder {
                path: PathBuf::new(),
                index: i as u64 + 1,
            });
        }
        Ok(Self {
            entries: entries.into(),
            pos: 0,
        })
    }
}

impl EntrySource for SortedRun {
    fn seek_to_first(&mut self) -> Result<()> {
        self.pos = 0;
        Ok(())
    }

    fn seek(&mut self, user_key: &[u8], seqno: u64) -> Result<()> {
        self.pos = self.entries.partition_point(|e| {
            (&e.user_key[..], std::cmp::Reverse(e.seqno)) < (user_key, std::cmp::Reverse(seqno))
        });
        Ok(())
    }

    fn next_entry(&mut self) -> Result<Option<Entry>> {
        let entry = self.entries.get(self.pos).cloned();
        if entry.is_some() {
            self.pos += 1;
        }
        Ok(entry)
    }
}
