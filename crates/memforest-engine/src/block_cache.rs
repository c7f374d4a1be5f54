//! [`BlockCache`]: blocks of segment files read by range from the object store, kept in
//! memory and dropped least recently read first. Its bytes count towards the same bound as
//! the local file copies ([`crate::cache::SegmentCache`], which decides how much of the
//! bound it may use).

use std::collections::BTreeMap;

use bytes::Bytes;
use parking_lot::Mutex;

/// A block's key: segment file id and the block's byte offset in it. Segment ids are never
/// reused and segment objects never replaced, so a key names the same bytes for good.
type Key = (u64, u64);

/// Blocks by `(segment id, offset)`, least recently read first out.
#[derive(Debug, Default)]
pub struct BlockCache {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Each block and the stamp of its last read.
    blocks: BTreeMap<Key, (Bytes, u64)>,
    /// The blocks by last read, oldest first.
    by_use: BTreeMap<u64, Key>,
    clock: u64,
    bytes: u64,
}

impl Inner {
    fn stamp(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn remove(&mut self, key: Key) {
        if let Some((bytes, used)) = self.blocks.remove(&key) {
            self.by_use.remove(&used);
            self.bytes -= bytes.len() as u64;
        }
    }
}

impl BlockCache {
    /// Bytes of the blocks held.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.inner.lock().bytes
    }

    /// The `len` bytes at `offset` of segment `id` if they are held (as one block), marked
    /// read now.
    #[must_use]
    pub fn get(&self, id: u64, offset: u64, len: usize) -> Option<Bytes> {
        let mut inner = self.inner.lock();
        let now = inner.stamp();
        let (bytes, used) = inner.blocks.get_mut(&(id, offset))?;
        if bytes.len() != len {
            return None;
        }
        let (bytes, old) = (bytes.clone(), std::mem::replace(used, now));
        inner.by_use.remove(&old);
        inner.by_use.insert(now, (id, offset));
        Some(bytes)
    }

    /// Holds `bytes`, the block at `offset` of segment `id`, read now.
    pub fn insert(&self, id: u64, offset: u64, bytes: Bytes) {
        let mut inner = self.inner.lock();
        inner.remove((id, offset));
        let now = inner.stamp();
        inner.bytes += bytes.len() as u64;
        inner.blocks.insert((id, offset), (bytes, now));
        inner.by_use.insert(now, (id, offset));
    }

    /// Drops the least recently read blocks until at most `limit` bytes are held.
    pub fn shrink_to(&self, limit: u64) {
        let mut inner = self.inner.lock();
        while inner.bytes > limit {
            let Some((_, key)) = inner.by_use.pop_first() else {
                break;
            };
            inner.remove(key);
        }
    }

    /// Drops every block of segment `id` (its file is no longer read).
    pub fn forget(&self, id: u64) {
        let mut inner = self.inner.lock();
        let keys: Vec<Key> = inner
            .blocks
            .range((id, 0)..=(id, u64::MAX))
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            inner.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn block(n: usize) -> Bytes {
        Bytes::from(vec![7u8; n])
    }

    #[test]
    fn the_least_recently_read_blocks_go_first() {
        let cache = BlockCache::default();
        cache.insert(1, 0, block(100));
        cache.insert(1, 100, block(100));
        cache.insert(2, 0, block(100));
        assert!(cache.get(1, 0, 100).is_some());
        cache.shrink_to(200);
        assert_eq!(cache.bytes(), 200);
        assert!(cache.get(1, 100, 100).is_none(), "least recently read");
        assert!(cache.get(1, 0, 100).is_some());
        assert!(cache.get(2, 0, 100).is_some());
        assert!(
            cache.get(2, 0, 99).is_none(),
            "another length is not this block"
        );

        cache.forget(2);
        assert_eq!(cache.bytes(), 100);
        cache.insert(1, 0, block(50));
        assert_eq!(
            cache.bytes(),
            50,
            "a block inserted again replaces its bytes"
        );
        cache.shrink_to(0);
        assert_eq!(cache.bytes(), 0);
    }
}
