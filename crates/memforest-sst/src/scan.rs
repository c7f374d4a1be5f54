//! The snapshot view of an entry source: one version per user key.

use std::ops::Bound;

use bytes::Bytes;

use crate::error::Result;
use crate::internal_key::{Entry, Kind, MAX_SEQNO};
use crate::source::EntrySource;

/// What a [`ScanIterator`] shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOptions {
    /// Only versions with `seqno <= snapshot_seqno` are visible (RocksDB
    /// `ReadOptions::snapshot`). Default [`MAX_SEQNO`]: everything.
    pub snapshot_seqno: u64,
    /// When true (default; reads, and bottom-level compaction), a user key whose newest
    /// visible version is a tombstone is skipped entirely. When false (compaction above the
    /// bottom level), that tombstone is yielded so it keeps shadowing older files.
    pub drop_tombstones: bool,
    /// Smallest user key to yield.
    pub lower: Bound<Bytes>,
    /// Largest user key to yield.
    pub upper: Bound<Bytes>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            snapshot_seqno: MAX_SEQNO,
            drop_tombstones: true,
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        }
    }
}

/// Yields, for each user key in range, its newest version with `seqno <= snapshot_seqno`
/// (newest seqno wins, so a tombstone hides every older version), in user-key order.
///
/// It keeps only that one version per key, so a compaction that must preserve older
/// versions for live snapshots older than `snapshot_seqno` needs more than this iterator.
/// After the first error it yields nothing more.
#[derive(Debug)]
pub struct ScanIterator<S> {
    source: S,
    options: ScanOptions,
    /// The user key whose visible version has been decided (older versions are skipped);
    /// `None` after a seek. A reused buffer, so stepping does not allocate.
    decided: Option<Vec<u8>>,
    done: bool,
}

impl<S: EntrySource> ScanIterator<S> {
    /// A view of `source`, positioned at the lower bound.
    ///
    /// # Errors
    /// The source's error while seeking.
    pub fn new(source: S, options: ScanOptions) -> Result<Self> {
        let mut scan = Self {
            source,
            options,
            decided: None,
            done: false,
        };
        scan.rewind()?;
        Ok(scan)
    }

    /// Repositions at the lower bound.
    ///
    /// # Errors
    /// The source's error while seeking.
    pub fn rewind(&mut self) -> Result<()> {
        self.decided = None;
        self.done = false;
        match &self.options.lower {
            Bound::Included(k) | Bound::Excluded(k) => self.source.seek(k, MAX_SEQNO),
            Bound::Unbounded => self.source.seek_to_first(),
        }
    }

    /// Repositions at the first user key `>= user_key` (and within the bounds).
    ///
    /// # Errors
    /// The source's error while seeking.
    pub fn seek(&mut self, user_key: &[u8]) -> Result<()> {
        let below_lower = match &self.options.lower {
            Bound::Included(k) | Bound::Excluded(k) => user_key < &k[..],
            Bound::Unbounded => false,
        };
        if below_lower {
            return self.rewind();
        }
        self.decided = None;
        self.done = false;
        self.source.seek(user_key, MAX_SEQNO)
    }

    /// The source, for inspection.
    #[must_use]
    pub fn source(&self) -> &S {
        &self.source
    }

    fn above_upper(&self, key: &[u8]) -> bool {
        match &self.options.upper {
            Bound::Included(u) => key > &u[..],
            Bound::Excluded(u) => key >= &u[..],
            Bound::Unbounded => false,
        }
    }

    fn below_lower(&self, key: &[u8]) -> bool {
        match &self.options.lower {
            Bound::Included(l) => key < &l[..],
            Bound::Excluded(l) => key <= &l[..],
            Bound::Unbounded => false,
        }
    }

    fn step(&mut self) -> Result<Option<Entry>> {
        while let Some(entry) = self.source.next_entry()? {
            if self.above_upper(&entry.user_key) {
                return Ok(None);
            }
            if entry.seqno > self.options.snapshot_seqno
                || self.decided.as_deref() == Some(&entry.user_key[..])
                || self.below_lower(&entry.user_key)
            {
                continue;
            }
            let decided = self.decided.get_or_insert_with(Vec::new);
            decided.clear();
            decided.extend_from_slice(&entry.user_key);
            if entry.kind == Kind::Tombstone && self.options.drop_tombstones {
                continue;
            }
            return Ok(Some(entry));
        }
        Ok(None)
    }
}

impl<S: EntrySource> Iterator for ScanIterator<S> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}
