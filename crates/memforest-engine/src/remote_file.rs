//! [`RemoteFile`]: a segment object read by range ([`memforest_sst::RangeRead`]), its
//! blocks kept in the store's [`crate::cache::SegmentCache`].

use std::sync::Arc;

use bytes::Bytes;
use memforest_object::Remote;
use parking_lot::Mutex;

use crate::cache::SegmentCache;
use crate::remote::segment_name;

/// Segment file `id` in the object store, read one range (one GET) per block not in the
/// cache; a scan's block read also fetches the bytes after it, up to
/// `SegmentCache::read_ahead`. Blocks missing from the cache are fetched one at a time
/// per file, so readers racing for one block make one request; a range is kept only when
/// the block asked for verifies (the blocks read ahead are checked when they are read).
#[derive(Debug)]
pub struct RemoteFile {
    remote: Arc<Remote>,
    cache: Arc<SegmentCache>,
    id: u64,
    /// The file's length as the manifest records it.
    size: u64,
    /// Held while a missing block is fetched.
    fetching: Mutex<()>,
}

impl RemoteFile {
    /// Segment file `id` of `size` bytes in the object store `cache` keeps, its blocks kept
    /// in `cache`.
    #[must_use]
    pub fn new(cache: Arc<SegmentCache>, id: u64, size: u64) -> Self {
        Self {
            remote: Arc::clone(cache.remote()),
            cache,
            id,
            size,
            fetching: Mutex::new(()),
        }
    }

    /// The object's full name, to label errors.
    #[must_use]
    pub fn label(&self) -> String {
        format!("{}/{}", self.remote, segment_name(self.id))
    }

    fn get(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        let end = offset.saturating_add(len as u64);
        self.remote
            .get_range(&segment_name(self.id), offset..end)
            .map_err(std::io::Error::other)
    }
}

impl memforest_sst::RangeRead for RemoteFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_block(&self, offset: u64, len: usize, scan: bool) -> std::io::Result<Bytes> {
        let blocks = self.cache.blocks();
        if let Some(hit) = blocks.get(self.id, offset, len) {
            return Ok(hit);
        }
        let _one_at_a_time = self.fetching.lock();
        if let Some(hit) = blocks.get(self.id, offset, len) {
            return Ok(hit);
        }
        let ahead = if scan { self.cache.read_ahead() } else { 0 };
        let want = ahead.min(self.size.saturating_sub(offset)).max(len as u64);
        let bytes = self.get(offset, usize::try_from(want).unwrap_or(len))?;
        let Some(block) = bytes.get(..len).map(|_| bytes.slice(..len)) else {
            return Ok(bytes);
        };
        if memforest_sst::block::trailer::verifies(&block) {
            self.cache.cache_block(self.id, offset, bytes);
        }
        Ok(block)
    }

    fn read_once(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        self.get(offset, len)
    }
}
