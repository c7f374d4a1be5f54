//! K-way merge of several entry sources.

use std::cmp::Ordering;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;

use crate::error::Result;
use crate::internal_key::Entry;
use crate::scan::{ScanIterator, ScanOptions};
use crate::source::EntrySource;

/// A boxed source, as [`MergeIterator`] takes them.
pub type BoxedSource = Box<dyn EntrySource + Send>;

/// Merges several sources (in-memory runs, files, other merges) into one stream in
/// internal-key order, every version included (mini-lsm `MergeIterator`).
///
/// Sources are given newest first: when two sources hold the same internal key (same user
/// key and seqno), the one listed first comes out first. The merge itself hides nothing;
/// [`MergeIterator::scan`] (a [`ScanIterator`] over the merge) gives the newest version of
/// each user key visible at a snapshot, hides deleted keys, and can drop tombstones for a
/// bottom-level compaction.
pub struct MergeIterator {
    sources: Vec<BoxedSource>,
    heap: BinaryHeap<Head>,
}

impl std::fmt::Debug for MergeIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergeIterator")
            .field("sources", &self.sources.len())
            .field("pending", &self.heap.len())
            .finish()
    }
}

/// The next entry of one source, ordered so the max-heap pops the smallest internal key
/// (and, on ties, the lowest source index) first.
struct Head {
    entry: Entry,
    source: usize,
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .entry
            .cmp_key(&self.entry)
            .then_with(|| other.source.cmp(&self.source))
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

impl MergeIterator {
    /// A merge over `sources` (newest first), positioned at the start.
    ///
    /// # Errors
    /// The first error of any source while positioning.
    pub fn new(sources: Vec<BoxedSource>) -> Result<Self> {
        let mut merge = Self {
            sources,
            heap: BinaryHeap::new(),
        };
        merge.seek_to_first()?;
        Ok(merge)
    }

    /// The snapshot view of a merge over `sources`: see [`ScanIterator`].
    ///
    /// # Errors
    /// The first error of any source while positioning.
    pub fn scan(sources: Vec<BoxedSource>, options: ScanOptions) -> Result<ScanIterator<Self>> {
        ScanIterator::new(Self::new(sources)?, options)
    }

    /// Refills the heap with the next entry of every source (after a seek).
    fn refill_all(&mut self) -> Result<()> {
        self.heap.clear();
        for source in 0..self.sources.len() {
            self.refill(source)?;
        }
        Ok(())
    }

    fn refill(&mut self, source: usize) -> Result<()> {
        if let Some(src) = self.sources.get_mut(source) {
            if let Some(entry) = src.next_entry()? {
                self.heap.push(Head { entry, source });
            }
        }
        Ok(())
    }
}

impl EntrySource for MergeIterator {
    fn seek_to_first(&mut self) -> Result<()> {
        for source in &mut self.sources {
            source.seek_to_first()?;
        }
        self.refill_all()
    }

    fn seek(&mut self, user_key: &[u8], seqno: u64) -> Result<()> {
        for source in &mut self.sources {
            source.seek(user_key, seqno)?;
        }
        self.refill_all()
    }

    /// Replaces the heap's top in place with its source's next entry (one sift down,
    /// usually a comparison or two while one source holds a run of the smallest keys)
    /// instead of a pop and a push.
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        let Some(mut top) = self.heap.peek_mut() else {
            return Ok(None);
        };
        let next = match self.sources.get_mut(top.source) {
            Some(src) => src.next_entry()?,
            None => None,
        };
        Ok(Some(match next {
            Some(entry) => std::mem::replace(&mut top.entry, entry),
            None => PeekMut::pop(top).entry,
        }))
    }
}
