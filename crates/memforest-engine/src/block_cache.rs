//! [`BlockCache`]: blocks of segment files read by range from the object store (one at a
//! time, or several read ahead by a scan), kept in memory and dropped least recently read
//! first. Its bytes count towards the same bound as
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

    /// The `len` bytes at `offset` of segment `id` if the range held nearest below them
    /// (one block, or blocks read ahead) covers them; that range is marked read now.
    #[must_use]
    pub fn get(&self, id: u64, offset: u64, len: usize) -> Option<Bytes> {
        let mut inner = self.inner.lock();
        let now = inner.stamp();
        let Inner { blocks, by_use, .. } = &mut *inner;
        let (&key, (bytes, used)) = blocks.range_mut(..=(id, offset)).next_back()?;
        if key.0 != id {
            return None;
        }
        let from = usize::try_from(offset.checked_sub(key.1)?).ok()?;
        if bytes.len() < from.checked_add(len)? {
            return None;
        }
        let hit = bytes.slice(from..from + len);
        by_use.remove(&std::mem::replace(used, now));
        by_use.insert(now, key);
        Some(hit)
    }

    /// Holds `bytes`, the bytes at `offset` of segment `id` (one block or several), read
    /// now, in place of the ranges held inside them.
    pub fn insert(&self, id: u64, offset: u64, bytes: Bytes) {
        let mut inner = self.inner.lock();
        let end = offset.saturating_add(bytes.len() as u64);
        let inside: Vec<Key> = inner
            .blocks
            .range((id, offset)..(id, end))
            .filter(|(k, (b, _))| k.1 + b.len() as u64 <= end)
            .map(|(k, _)| *k)
            .collect();
        for key in inside {
            inner.remove(key);
        }
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
        assert!(cache.get(2, 0, 101).is_none(), "past the block held");
        assert_eq!(
            cache.get(2, 10, 20).unwrap().len(),
            20,
            "inside the block held"
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

    #[test]
    fn blocks_read_ahead_serve_the_blocks_inside_them() {
        let cache = BlockCache::default();
        cache.insert(1, 4096, block(100));
        cache.insert(1, 0, block(10_000));
        assert_eq!(cache.bytes(), 10_000, "the block inside was replaced");
        for offset in [0, 4096, 9_000] {
            assert!(cache.get(1, offset, 1_000).is_some(), "{offset}");
        }
        assert!(cache.get(1, 9_500, 1_000).is_none());
        assert!(cache.get(2, 100, 10).is_none(), "another segment");
    }
}
