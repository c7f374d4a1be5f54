//! [`SummaryCache`]: the BM25 term counts of MemTree nodes' clean summaries (and which
//! nodes have none), so a browse ranks a node's children without reading their pages: it
//! scores every child of each frontier node by its summary and keeps only the `beam` best,
//! so most of its page reads (about 15 of every 16 at the default branching factor) were
//! for one summary. An entry is a few hundred bytes where the page (with every leaf text)
//! is kilobytes, so the same memory holds many more nodes than the page cache.
//!
//! Keyed like the page cache by `(tree, node, page CRC)` within a tenant: a rewritten page
//! has a new CRC (its parent's reference carries it), so an entry never goes stale and
//! snapshot readers share it; a forget drops the tenant's entries outright. Bounded in
//! bytes, least recently used evicted first (`ByteLru`).

use std::sync::Arc;

use crate::recall::lru::ByteLru;
use crate::recall::page::Terms;
use memforest_engine::TenantId;

/// Default capacity: 64 MiB of summary term counts (16 bytes per distinct term).
pub const DEFAULT_SUMMARY_BYTES: usize = 128 << 20;
/// Bytes charged per cached node besides its term counts.
const NODE_OVERHEAD: usize = 96;

/// `(tree, node, page CRC)` within a tenant.
pub type PageId = (u64, u64, u32);

/// Clean-summary term counts per node page (`None`: the node has no clean summary).
#[derive(Debug)]
pub struct SummaryCache {
    lru: ByteLru<PageId, Option<Arc<Terms>>>,
}

impl Default for SummaryCache {
    fn default() -> Self {
        Self::new(DEFAULT_SUMMARY_BYTES)
    }
}

impl SummaryCache {
    /// A cache of at most `capacity` bytes.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            lru: ByteLru::new(capacity),
        }
    }

    /// The cached summary of page `id`: `None` when not cached, `Some(None)` when the node
    /// has no clean summary.
    #[must_use]
    pub fn get(&self, tenant: &TenantId, id: PageId) -> Option<Option<Arc<Terms>>> {
        self.lru.get(tenant, &id)
    }

    /// Caches the summary of page `id`.
    pub fn insert(&self, tenant: &TenantId, id: PageId, summary: Option<Arc<Terms>>) {
        let terms = summary.as_ref().map_or(0, |t| t.counts.len());
        let bytes = terms * std::mem::size_of::<(u64, u32)>() + NODE_OVERHEAD;
        self.lru.insert(tenant, id, summary, bytes);
    }

    /// Drops every entry of `tenant`.
    pub fn forget_tenant(&self, tenant: &TenantId) {
        self.lru.forget_tenant(tenant);
    }
}
