//! [`Reader`]: one tenant's tables read at one seqno (the query's snapshot, or the latest
//! published state), plus MemTree pages read through the heat-managed page cache and
//! their summaries' term counts through the summary cache.

use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;
use memforest_tree::meta::TreeMeta;
use memforest_tree::page::{self, Page};
use memforest_tree::{NodeId, PageKey, TreeId};

use crate::memory::MemoryError;
use crate::node_store::page_key;
use crate::recall::page::{IndexedNode, Terms};
use crate::recall::RecallState;
use crate::schema::Table;
use memforest_engine::Db;
use memforest_engine::Scan;
use memforest_engine::Snapshot;
use memforest_engine::TenantId;

/// Reads of one tenant at one seqno.
#[derive(Debug)]
pub struct Reader<'a> {
    db: &'a Db,
    tenant: &'a TenantId,
    seq: u64,
    /// A snapshot registered at `seq` for the reader's life, so no flush or compaction drops
    /// a version this reader's later reads need.
    _pin: Snapshot,
    caches: &'a RecallState,
}

impl<'a> Reader<'a> {
    /// Reads of `tenant` at `seq` (the seqno of a snapshot the caller holds) or, for
    /// `None`, at the latest state, with node pages and summaries cached in `caches`. The seqno read at is pinned
    /// by a snapshot for the reader's life.
    ///
    /// # Errors
    /// [`MemoryError::SnapshotNotHeld`] when no snapshot at `seq` is live (below the latest
    /// state its versions may be gone; past it, it names no state).
    pub(crate) fn new(
        db: &'a Db,
        tenant: &'a TenantId,
        seq: Option<u64>,
        caches: &'a RecallState,
    ) -> Result<Self, MemoryError> {
        let pin = match seq {
            Some(s) => db
                .pin_snapshot(s)
                .ok_or(MemoryError::SnapshotNotHeld { seqno: s })?,
            None => db.snapshot(),
        };
        Ok(Self {
            db,
            tenant,
            seq: pin.seqno(),
            _pin: pin,
            caches,
        })
    }

    /// The tenant.
    #[must_use]
    pub fn tenant(&self) -> &TenantId {
        self.tenant
    }

    /// True when reading the latest state (not an older snapshot).
    #[must_use]
    pub fn is_latest(&self) -> bool {
        self.seq == self.db.seqno()
    }

    /// The value of `key` in `table`.
    ///
    /// # Errors
    /// Engine read errors.
    pub fn get(&self, table: Table, key: &[u8]) -> Result<Option<Bytes>, MemoryError> {
        Ok(self.db.get_at(&self._pin, self.tenant, table.into(), key)?)
    }

    /// A lazy scan of `table`'s keys starting with `prefix` (keys relative to the table).
    ///
    /// # Errors
    /// Engine read errors.
    pub fn scan_prefix(&self, table: Table, prefix: &[u8]) -> Result<Scan, MemoryError> {
        Ok(self
            .db
            .scan_prefix(self.tenant, table.into(), prefix, Some(&self._pin))?)
    }

    /// A lazy scan of `table`'s keys from `lower` to `upper`, both included (keys relative
    /// to the table).
    ///
    /// # Errors
    /// Engine read errors.
    pub fn scan(&self, table: Table, lower: &[u8], upper: &[u8]) -> Result<Scan, MemoryError> {
        Ok(self.db.scan(
            self.tenant,
            table.into(),
            Bound::Included(lower),
            Bound::Included(upper),
            Some(&self._pin),
        )?)
    }

    /// The meta page of tree `tree`; `None` when the tree does not exist.
    ///
    /// # Errors
    /// Engine errors; a corrupt meta page.
    pub fn tree_meta(&self, tree: u64) -> Result<Option<TreeMeta>, MemoryError> {
        let key = PageKey {
            tree: TreeId(tree),
            node: NodeId::META,
        };
        let Some(bytes) = self.get(Table::NodePages, &page_key(key))? else {
            return Ok(None);
        };
        match page::decode(&bytes) {
            Ok(Page::Meta(m)) => Ok(Some(m)),
            Ok(Page::Node(_)) => Err(corrupt(tree, "node page where the meta page belongs")),
            Err(e) => Err(MemoryError::Corrupt {
                what: "tree meta page",
                detail: e.to_string(),
            }),
        }
    }

    /// Node `node` of tree `tree`, whose page must carry the masked CRC `crc` (from the
    /// parent's reference or the meta page), served from the page cache when possible;
    /// `heat` decides whether the page is kept there.
    ///
    /// # Errors
    /// Engine errors; a missing page, a CRC mismatch, or a page that fails to decode.
    pub fn node(
        &self,
        tree: u64,
        node: NodeId,
        crc: u32,
        heat: f64,
    ) -> Result<Arc<IndexedNode>, MemoryError> {
        if let Some(n) = self.caches.cache.get(self.tenant, tree, node.0, crc) {
            return Ok(n);
        }
        let key = PageKey {
            tree: TreeId(tree),
            node,
        };
        let bytes = self
            .get(Table::NodePages, &page_key(key))?
            .ok_or_else(|| corrupt(tree, "a referenced node page is missing"))?;
        if page::page_crc(&bytes) != Some(crc) {
            return Err(corrupt(tree, "node page CRC differs from its reference"));
        }
        let n = match page::decode(&bytes) {
            Ok(Page::Node(n)) => Arc::new(IndexedNode::new(n)),
            Ok(Page::Meta(_)) => return Err(corrupt(tree, "meta page where a node belongs")),
            Err(e) => {
                return Err(MemoryError::Corrupt {
                    what: "tree node page",
                    detail: e.to_string(),
                })
            }
        };
        self.caches
            .cache
            .insert(self.tenant, tree, node.0, crc, bytes.len(), heat, &n);
        Ok(n)
    }

    /// The term counts of the clean summary of node `node` of tree `tree` (`None`: it has
    /// none), from the summary cache when possible, else from its page as read by
    /// [`Reader::node`] (same arguments).
    ///
    /// # Errors
    /// As [`Reader::node`].
    pub fn summary(
        &self,
        tree: u64,
        node: NodeId,
        crc: u32,
        heat: f64,
    ) -> Result<Option<Arc<Terms>>, MemoryError> {
        let id = (tree, node.0, crc);
        if let Some(summary) = self.caches.summaries.get(self.tenant, id) {
            return Ok(summary);
        }
        let summary = self.node(tree, node, crc, heat)?.summary().cloned();
        self.caches
            .summaries
            .insert(self.tenant, id, summary.clone());
        Ok(summary)
    }
}

fn corrupt(tree: u64, what: &'static str) -> MemoryError {
    MemoryError::Corrupt {
        what: "tree page",
        detail: format!("tree {tree}: {what}"),
    }
}
