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

/// Keys up to this many bytes are stored inside the skip-list node, so comparing them
/// costs no extra pointer chase (and inserting them no allocation).
const INLINE_KEY: usize = 46;

/// Key bytes, inline when short.
#[derive(Debug, Clone)]
enum KeyBytes {
    Inline(u8, [u8; INLINE_KEY]),
    Heap(Bytes),
}

impl KeyBytes {
    fn new(key: &[u8]) -> Self {
        match u8::try_from(key.len()) {
            Ok(len) if key.len() <= INLINE_KEY => {
                let mut buf = [0u8; INLINE_KEY];
                if let Some(dst) = buf.get_mut(..key.len()) {
                    dst.copy_from_slice(key);
                }
                Self::Inline(len, buf)
            }
            _ => Self::Heap(Bytes::copy_from_slice(key)),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Self::Inline(len, buf) => buf.get(..usize::from(*len)).unwrap_or_default(),
            Self::Heap(b) => b,
        }
    }

    fn to_bytes(&self) -> Bytes {
        match self {
            Self::Inline(..) => Bytes::copy_from_slice(self.as_slice()),
            Self::Heap(b) => b.clone(),
        }
    }
}

/// A key version: user key ascending, then seqno descending (newest first).
#[derive(Debug, Clone)]
pub struct MemKey {
    key: KeyBytes,
    seqno: u64,
}

impl MemKey {
    fn new(key: &[u8], seqno: u64) -> Self {
        Self {
            key: KeyBytes::new(key),
            seqno,
        }
    }
}

impl PartialEq for MemKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for MemKey {}

impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key
            .as_slice()
            .cmp(other.key.as_slice())
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
    pub fn insert(&self, key: &[u8], seqno: u64, kind: Kind, value: Bytes) {
        self.size.fetch_add(
            key.len() + value.len() + ENTRY_OVERHEAD,
            AtomicOrdering::Relaxed,
        );
        self.max_seqno.fetch_max(seqno, AtomicOrdering::Relaxed);
        self.map.insert(MemKey::new(key, seqno), (kind, value));
    }

    /// The newest version of `key` with seqno `<= snapshot`: `(seqno, kind, value)`.
    #[must_use]
    pub fn get(&self, key: &[u8], snapshot: u64) -> Option<(u64, Kind, Bytes)> {
        let found = self.map.range(MemKey::new(key, snapshot)..).next()?;
        if found.key().key.as_slice() != key {
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
        user_key: key.key.to_bytes(),
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
        self.next_from = Bound::Included(MemKey::new(user_key, seqno));
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
        m.insert(b"k", 1, Kind::Put, b(b"v1"));
        m.insert(b"k", 3, Kind::Tombstone, Bytes::new());
        m.insert(b"k", 5, Kind::Put, b(b"v5"));
        m.insert(b"j", 9, Kind::Put, b(b"j"));
        let long = vec![b'z'; 100];
        m.insert(&long, 2, Kind::Put, b(b"long"));
        assert_eq!(m.get(b"k", 0), None);
        assert_eq!(m.get(b"k", 2), Some((1, Kind::Put, b(b"v1"))));
        assert_eq!(m.get(b"k", 4).map(|x| x.1), Some(Kind::Tombstone));
        assert_eq!(m.get(b"k", 99), Some((5, Kind::Put, b(b"v5"))));
        assert_eq!(m.get(b"l", 99), None);
        assert_eq!(m.get(&long, 99).map(|x| x.2), Some(b(b"long")));
        let order: Vec<_> = m.entries().map(|e| (e.user_key, e.seqno)).collect();
        assert_eq!(
            order,
            vec![
                (b(b"j"), 9),
                (b(b"k"), 5),
                (b(b"k"), 3),
                (b(b"k"), 1),
                (Bytes::from(long.clone()), 2)
            ]
        );
        let mut c = m.cursor();
        c.seek(b"k", 4).unwrap();
        assert_eq!(c.next_entry().unwrap().map(|e| e.seqno), Some(3));
        assert_eq!(m.max_seqno(), 9);
    }
}
