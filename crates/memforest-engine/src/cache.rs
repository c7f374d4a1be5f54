//! [`SegmentCache`]: what a store with an object-storage tier keeps of its segment files
//! locally, within one bound (`Options::remote_cache_bytes`): whole copies in its
//! directory, and blocks read by range in memory ([`BlockCache`]).
//!
//! The object store holds every live segment file. A read of a segment whose directory
//! has no copy opens it by range ([`crate::remote_file::RemoteFile`]): its metadata tail
//! once, then one ranged GET per block not in the block cache, so a cold point read costs
//! a few KiB instead of the whole file, and a hot one no request at all. Compaction and
//! `verify`, which read every byte, fetch the whole file instead (one GET, under the
//! segment's own lock, so reads racing for it wait for one fetch), and so does any read of
//! a file no larger than the tail a ranged open reads ([`memforest_sst::OPEN_TAIL_LEN`]).
//! Flush and compaction outputs are local copies from the start.
//!
//! Each copy opened (fetched, found at open, or written) and each block kept counts its
//! bytes towards the bound. Once over it, the least recently read copies are deleted, and
//! then the least recently read blocks dropped, until the total is back under it. A copy
//! is skipped while
//! - a read holds it: another handle on its reader or an iterator over it
//!   ([`memforest_sst::SstReader::in_use`]; values already returned are slices of the
//!   mapping, which outlives the unlink);
//! - the object store may not hold it yet: a flush or compaction output before its upload
//!   succeeded.
//!
//! So a deleted copy is never the only copy, and the bound can be exceeded only by files
//! in use or awaiting upload. Deleting a copy is not garbage collection: the manifest
//! still names the segment, which is read by range (or fetched again) on its next read.
//! The metadata of segments opened by range (their filter and top-level index, held on the
//! heap as for a local file) is outside the bound.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memforest_io::Storage;
use memforest_object::Remote;
use memforest_sst::Recency;

use crate::block_cache::BlockCache;
use crate::error::Result;
use crate::remote;
use crate::version::Segment;

/// The bounded local copies and blocks of one store's segment files (see the module docs).
#[derive(Debug)]
pub struct SegmentCache {
    remote: Arc<Remote>,
    /// Bytes of local copies and blocks the cache keeps (outside copies in use or awaiting
    /// upload).
    bound: u64,
    /// Bytes of the local copies open now.
    cached: AtomicU64,
    /// Every cached segment, by last read.
    segments: Recency<Segment>,
    /// Blocks read by range.
    blocks: BlockCache,
}

impl SegmentCache {
    /// A cache of at most `bound` bytes of copies of `remote`'s segment files.
    #[must_use]
    pub fn new(remote: Arc<Remote>, bound: u64) -> Arc<Self> {
        Arc::new(Self {
            remote,
            bound,
            cached: AtomicU64::new(0),
            segments: Recency::new(),
            blocks: BlockCache::default(),
        })
    }

    /// Bytes held now: local copies open and blocks kept.
    #[must_use]
    pub fn cached_bytes(&self) -> u64 {
        self.copy_bytes() + self.blocks.bytes()
    }

    /// Bytes of the local copies open now.
    fn copy_bytes(&self) -> u64 {
        self.cached.load(Ordering::Relaxed)
    }

    /// The object store this cache holds copies of.
    pub(crate) fn remote(&self) -> &Arc<Remote> {
        &self.remote
    }

    /// Bytes a scan's block read fetches from its block on (an eighth of the bound, at most
    /// 1 MiB), so a cold scan makes one request per range rather than per block.
    pub(crate) fn read_ahead(&self) -> u64 {
        (self.bound / 8).min(1 << 20)
    }

    /// The blocks read by range.
    pub(crate) fn blocks(&self) -> &BlockCache {
        &self.blocks
    }

    /// Keeps `bytes`, the block at `offset` of segment `id`, then shrinks to the bound.
    pub(crate) fn cache_block(&self, id: u64, offset: u64, bytes: bytes::Bytes) {
        self.blocks.insert(id, offset, bytes);
        self.shrink();
    }

    /// Makes `segment` a member, used now.
    pub(crate) fn add(&self, segment: &Arc<Segment>) {
        self.segments.add(segment);
    }

    /// Records a read of `segment`.
    pub(crate) fn touch(&self, segment: &Segment) {
        self.segments.touch(segment);
    }

    /// Downloads segment file `id` into `dir` unless a copy is there.
    ///
    /// # Errors
    /// [`crate::Error::Remote`]; [`crate::Error::Io`].
    pub(crate) fn fetch(&self, storage: &dyn Storage, dir: &Path, id: u64) -> Result<()> {
        remote::fetch_segment(&self.remote, storage, dir, id)
    }

    /// Counts `bytes` of a copy just opened, then evicts down to the bound.
    pub(crate) fn opened(&self, bytes: u64) {
        self.cached.fetch_add(bytes, Ordering::Relaxed);
        self.shrink();
    }

    /// Uncounts `bytes` of a copy closed (evicted or dropped).
    pub(crate) fn closed(&self, bytes: u64) {
        self.cached.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Deletes the least recently read copies that may go, then drops the least recently
    /// read blocks, until the bytes held are within the bound.
    pub(crate) fn shrink(&self) {
        self.segments
            .shrink(|| self.cached_bytes() <= self.bound, Segment::evict);
        self.blocks
            .shrink_to(self.bound.saturating_sub(self.copy_bytes()));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use memforest_object::object_store::memory::InMemory;

    use super::*;

    #[test]
    fn kept_blocks_stay_within_the_bound() {
        let remote = Arc::new(Remote::new(Arc::new(InMemory::new()), "db").unwrap());
        let cache = SegmentCache::new(remote, 10_000);
        for offset in 0..100u64 {
            cache.cache_block(
                offset % 3,
                offset * 4096,
                bytes::Bytes::from(vec![1u8; 1_000]),
            );
            assert!(cache.cached_bytes() <= 10_000, "{}", cache.cached_bytes());
        }
        assert_eq!(cache.cached_bytes(), 10_000);
        assert!(
            cache.blocks().get(0, 99 * 4096, 1_000).is_some(),
            "the newest stays"
        );
        assert!(cache.blocks().get(0, 0, 1_000).is_none(), "the oldest went");

        cache.opened(6_000);
        assert_eq!(
            cache.cached_bytes(),
            10_000,
            "a copy opened leaves less for blocks"
        );
        assert_eq!(cache.blocks().bytes(), 4_000);
    }
}
