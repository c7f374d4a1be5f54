//! [`MemTable`]: the in-memory write buffer, a lock-free skip list in internal-key order.
//!
//! Writers insert concurrently with readers (crossbeam's `SkipMap`); a reader at snapshot
//! `s` ignores versions with seqno above `s`, so entries of a batch still being inserted
//! are invisible until the engine publishes the batch's seqnos.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use memforest_sst::{Entry, EntrySource, Kind};

/// Approximate bookkeeping bytes per entry (skip-list node, key and value headers).
const ENTRY_OVERHEAD: usize = 64;

/// A key version: user key ascending, then seqno descending (newest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemKey {
    /// Engine key.
    pub key: Bytes,
    /// Sequence number.
    pub seqno: u64,
}

impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key
            .cmp(&other.key)
            .then_with(|| other.seqno.cmp(&self.seqno))
    }
}

impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A sorted, concurrently readable write buffer (mini-lsm `MemTable`).
#[derive(Debug, Default)]
pub struct MemTable {
    map: SkipMap<MemKey, (Kind, Bytes)>,
    size: AtomicUsize,
    max_seqno: AtomicU64,
}

impl MemTable {
    /// An empty memtable.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Inserts one version.
    pub fn insert(&self, key: Bytes, seqno: u64, kind: Kind, value: Bytes) {
        self.size.fetch_add(
            key.len() + value.len() + ENTRY_OVERHEAD,
            AtomicOrdering::Relaxed,
        );
        self.max_seqno.fetch_max(seqno, AtomicOrdering::Relaxed);
        self.map.insert(MemKey { key, seqno }, (kind, value));
    }

    /// The newest version of `key` with seqno `<= snapshot`: `(seqno, kind, value)`.
    #[must_use]
    pub fn get(&self, key: &[u8], snapshot: u64) -> Option<(u64, Kind, Bytes)> {
        let probe = MemKey {
            key: Bytes::copy_from_slice(key),
            seqno: snapshot,
        };
        let found = self.map.range(probe..).next()?;
        if found.key().key != key {
            return None;
        }
        let (kind, value) = found.value();
        Some((found.key().seqno, *kind, value.clone()))
    }

    /// Approximate memory used, in bytes.
    #[must_use]
    pub fn approximate_size(&self) -> usize {
        self.size.load(AtomicOrdering::Relaxed)
    }

    /// Largest seqno inserted (0 when empty).
    #[must_use]
    pub fn max_seqno(&self) -> u64 {
        self.max_seqno.load(AtomicOrdering::Relaxed)
    }

    /// True when nothing was inserted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every version in internal-key order.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        self.map.iter().map(|e| to_entry(e.key(), e.value()))
    }

    /// A cursor over every version, for merging with segment files.
    #[must_use]
    pub fn cursor(self: &Arc<Self>) -> MemCursor {
        MemCursor {
            table: Arc::clone(self),
            next_from: Bound::Unbounded,
        }
    }
}

fn to_entry(key: &MemKey, (kind, value): &(Kind, Bytes)) -> Entry {
    Entry {
        user_key: key.key.clone(),
        seqno: key.seqno,
        kind: *kind,
        value: value.clone(),
    }
}

/// An [`EntrySource`] over a memtable; each step is one skip-list search from the last key
/// returned, so concurrent inserts never invalidate it.
#[derive(Debug)]
pub struct MemCursor {
    table: Arc<MemTable>,
    next_from: Bound<MemKey>,
}

impl EntrySource for MemCursor {
    fn seek_to_first(&mut self) -> memforest_sst::Result<()> {
        self.next_from = Bound::Unbounded;
        Ok(())
    }

    fn seek(&mut self, user_key: &[u8], seqno: u64) -> memforest_sst::Result<()> {
        self.next_from = Bound::Included(MemKey {
            key: Bytes::copy_from_slice(user_key),
            seqno,
        });
        Ok(())
    }

    fn next_entry(&mut self) -> memforest_sst::Result<Option<Entry>> {
        let range = (self.next_from.clone(), Bound::Unbounded);
        let Some(found) = self.table.map.range(range).next() else {
            return Ok(None);
        };
        self.next_from = Bound::Excluded(found.key().clone());
        Ok(Some(to_entry(found.key(), found.value())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_visible_version_wins() {
        let m = Arc::new(MemTable::new());
        let b = Bytes::from_static;
        m.insert(b(b"k"), 1, Kind::Put, b(b"v1"));
        m.insert(b(b"k"), 3, Kind::Tombstone, Bytes::new());
        m.insert(b(b"k"), 5, Kind::Put, b(b"v5"));
        m.insert(b(b"j"), 9, Kind::Put, b(b"j"));
        assert_eq!(m.get(b"k", 0), None);
        assert_eq!(m.get(b"k", 2), Some((1, Kind::Put, b(b"v1"))));
        assert_eq!(m.get(b"k", 4).map(|x| x.1), Some(Kind::Tombstone));
        assert_eq!(m.get(b"k", 99), Some((5, Kind::Put, b(b"v5"))));
        assert_eq!(m.get(b"l", 99), None);
        let order: Vec<_> = m.entries().map(|e| (e.user_key, e.seqno)).collect();
        assert_eq!(
            order,
            vec![(b(b"j"), 9), (b(b"k"), 5), (b(b"k"), 3), (b(b"k"), 1)]
        );
        let mut c = m.cursor();
        c.seek(b"k", 4).unwrap();
        assert_eq!(c.next_entry().unwrap().map(|e| e.seqno), Some(3));
        assert_eq!(m.max_seqno(), 9);
    }
}
