//! [`SegmentCache`]: the local directory of a store with an object-storage tier as a
//! bounded cache of its segment files (`Options::remote_cache_bytes`).
//!
//! The object store holds every live segment file; the directory holds copies. A live
//! segment whose copy is not local is fetched whole (one GET) on its first read, under the
//! segment's own lock, so readers racing for it wait for one fetch. Each copy opened
//! (fetched, found at open, or written by a flush or compaction) counts its bytes towards
//! the bound; once over it, the least recently read copies are deleted until the cached
//! bytes are back under it, skipping any copy that
//! - a read holds: another handle on its reader or an iterator over it
//!   ([`memforest_sst::SstReader::in_use`]; values already returned are slices of the
//!   mapping, which outlives the unlink);
//! - the object store may not hold yet: a flush or compaction output before its upload
//!   succeeded.
//!
//! So a deleted copy is never the only copy, and the bound can be exceeded only by files
//! in use or awaiting upload. Deleting a copy is not garbage collection: the manifest
//! still names the segment, which is fetched again on its next read.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memforest_io::Storage;
use memforest_object::Remote;
use memforest_sst::Recency;

use crate::error::Result;
use crate::remote;
use crate::version::Segment;

/// The bounded set of local segment-file copies of one store (see the module docs).
#[derive(Debug)]
pub struct SegmentCache {
    remote: Arc<Remote>,
    /// Bytes of local copies the cache keeps (outside those in use or awaiting upload).
    bound: u64,
    /// Bytes of the local copies open now.
    cached: AtomicU64,
    /// Every cached segment, by last read.
    segments: Recency<Segment>,
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
        })
    }

    /// Bytes of the local copies open now.
    #[must_use]
    pub fn cached_bytes(&self) -> u64 {
        self.cached.load(Ordering::Relaxed)
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

    /// Deletes the least recently read copies that may go until the cached bytes are
    /// within the bound.
    pub(crate) fn shrink(&self) {
        self.segments
            .shrink(|| self.cached_bytes() <= self.bound, Segment::evict);
    }
}
