//! [`PageCache`]: decoded MemTree node pages kept in memory, bounded in bytes (the encoded
//! page sizes), admitted and evicted by tree heat: when full, a page enters only by
//! evicting pages of colder trees, coldest first. Entries are keyed by the page's CRC as
//! well as its id, so a rewritten page never serves its old content (the reference to it
//! carries the new CRC); a forget drops the tenant's entries outright.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::recall::page::IndexedNode;
use parking_lot::Mutex;

use crate::key::TenantId;

/// Default capacity: 32 MiB of encoded pages.
pub const DEFAULT_CACHE_BYTES: usize = 32 << 20;

/// (tree, node, crc) within a tenant.
type PageId = (u64, u64, u32);
type Key = (TenantId, PageId);

#[derive(Debug)]
struct Slot {
    node: Arc<IndexedNode>,
    bytes: usize,
    order: (u64, u64),
}

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<TenantId, HashMap<PageId, Slot>>,
    /// (heat bits, stamp) -> key: eviction order, coldest first.
    order: BTreeMap<(u64, u64), Key>,
    used: usize,
    stamp: u64,
}

/// A heat-managed page cache.
#[derive(Debug)]
pub struct PageCache {
    capacity: usize,
    inner: Mutex<Inner>,
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
            capacity,
            inner: Mutex::new(Inner::default()),
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
        let inner = self.inner.lock();
        inner
            .map
            .get(tenant)?
            .get(&(tree, node, crc))
            .map(|s| Arc::clone(&s.node))
    }

    /// Offers a page of `bytes` bytes from a tree of heat `heat` (>= 0).
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
        if bytes > self.capacity {
            return;
        }
        let heat_bits = heat.max(0.0).to_bits();
        let mut inner = self.inner.lock();
        let id = (tree, node, crc);
        if inner.map.get(tenant).is_some_and(|m| m.contains_key(&id)) {
            return;
        }
        while inner.used + bytes > self.capacity {
            let Some((&order, _)) = inner.order.iter().next() else {
                return;
            };
            if order.0 > heat_bits {
                return;
            }
            if let Some((t, victim)) = inner.order.remove(&order) {
                if let Some(s) = inner.map.get_mut(&t).and_then(|m| m.remove(&victim)) {
                    inner.used -= s.bytes;
                }
            }
        }
        inner.stamp += 1;
        let order = (heat_bits, inner.stamp);
        inner.order.insert(order, (tenant.clone(), id));
        inner.used += bytes;
        inner.map.entry(tenant.clone()).or_default().insert(
            id,
            Slot {
                node: Arc::clone(n),
                bytes,
                order,
            },
        );
    }

    /// Drops every page of `tenant`.
    pub fn forget_tenant(&self, tenant: &TenantId) {
        let mut inner = self.inner.lock();
        let Some(pages) = inner.map.remove(tenant) else {
            return;
        };
        for s in pages.into_values() {
            inner.used -= s.bytes;
            inner.order.remove(&s.order);
        }
    }

    /// Bytes of pages held.
    #[must_use]
    pub fn used(&self) -> usize {
        self.inner.lock().used
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
