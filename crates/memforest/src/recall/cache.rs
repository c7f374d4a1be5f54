//! [`PageCache`]: decoded MemTree node pages kept in memory, bounded in bytes (the encoded
//! page sizes), admitted and evicted by tree heat: when full, a page enters only by
//! evicting pages of trees at most as hot, coldest first (least recently used first among
//! equally hot trees). Entries are keyed by the page's CRC as well as its id, so a
//! rewritten page never serves its old content (the reference to it carries the new CRC);
//! a forget drops the tenant's entries outright.

use std::sync::Arc;

use crate::recall::lru::ByteLru;
use crate::recall::page::IndexedNode;
use memforest_engine::TenantId;

/// Default capacity: 32 MiB of encoded pages.
pub const DEFAULT_CACHE_BYTES: usize = 32 << 20;

/// (tree, node, crc) within a tenant.
type PageId = (u64, u64, u32);

/// A heat-managed page cache: pages ranked by their tree's heat in a [`ByteLru`].
#[derive(Debug)]
pub struct PageCache {
    pages: ByteLru<PageId, Arc<IndexedNode>>,
}

impl Default for PageCache {
    fn default() -> Self {
        Self::new(DEFAULT_CACHE_BYTES)
    }
}

impl PageCache {
    /// A cache of at most `capacity` bytes of encoded pages.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            pages: ByteLru::new(capacity),
        }
    }

    /// The cached node `node` of `tree` whose page has CRC `crc`.
    #[must_use]
    pub fn get(
        &self,
        tenant: &TenantId,
        tree: u64,
        node: u64,
        crc: u32,
    ) -> Option<Arc<IndexedNode>> {
        self.pages.get(tenant, &(tree, node, crc))
    }

    /// Offers a page of `bytes` bytes from a tree of heat `heat` (>= 0): it enters a full
    /// cache only by evicting pages of trees at most as hot, coldest first.
    #[allow(clippy::too_many_arguments)]
    pub fn insert(
        &self,
        tenant: &TenantId,
        tree: u64,
        node: u64,
        crc: u32,
        bytes: usize,
        heat: f64,
        n: &Arc<IndexedNode>,
    ) {
        let rank = heat.max(0.0).to_bits();
        self.pages
            .insert_ranked(tenant, (tree, node, crc), Arc::clone(n), bytes, rank);
    }

    /// Drops every page of `tenant`.
    pub fn forget_tenant(&self, tenant: &TenantId) {
        self.pages.forget_tenant(tenant);
    }

    /// Bytes of pages held.
    #[must_use]
    pub fn used(&self) -> usize {
        self.pages.used()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memforest_tree::{Node, NodeBody};

    #[test]
    fn full_cache_admits_only_hotter_pages_and_evicts_the_coldest() {
        let t = TenantId::new("t").unwrap();
        let n = Arc::new(IndexedNode::new(Node::new(
            1,
            0,
            NodeBody::Leaves(Vec::new()),
        )));
        let c = PageCache::new(100);
        c.insert(&t, 1, 1, 7, 60, 1.0, &n);
        c.insert(&t, 2, 1, 7, 60, 0.5, &n);
        assert!(c.get(&t, 2, 1, 7).is_none(), "colder page must not evict");
        c.insert(&t, 3, 1, 7, 60, 2.0, &n);
        assert!(c.get(&t, 3, 1, 7).is_some());
        assert!(c.get(&t, 1, 1, 7).is_none());
        assert_eq!(c.used(), 60);
        assert!(c.get(&t, 3, 1, 8).is_none(), "another crc is another page");
        c.forget_tenant(&t);
        assert_eq!(c.used(), 0);
    }
}
