//! MemTree node pages persisted through the engine (`memforest_tree::NodeStore`).
//!
//! A page lives in the [`Table::NodePages`] table of its tenant under
//! `tree id (u64 BE) | node id (u64 BE)`, so a tree's pages are contiguous. Two stores:
//! [`EngineNodeStore`] commits each `PageBatch` as its own engine batch;
//! [`StagedNodeStore`] only adds the page ops to a caller's [`WriteBatch`] (reading its own
//! staged pages back), so the facts and the tree structure they caused commit in one
//! atomic batch and can never disagree after a crash. [`SnapshotNodeStore`] reads a
//! tenant's pages at one snapshot, so a tree rewritten meanwhile is still seen whole.

use memforest_tree::store::PageOp;
use memforest_tree::{NodeStore, PageBatch, PageKey, StoreError};
use memforest_wal::Durability;

use memforest_engine::{Db, Error, Snapshot, TenantId, WriteBatch};

use crate::schema::Table;

/// The engine table of the node pages.
const PAGES: memforest_engine::Table = memforest_engine::Table::new(Table::NodePages as u8);

/// The key of `page` within the node-pages table.
#[must_use]
pub fn page_key(page: PageKey) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&page.tree.0.to_be_bytes());
    out[8..].copy_from_slice(&page.node.0.to_be_bytes());
    out
}

/// Adds the ops of a MemTree `PageBatch` for `tenant`'s trees to `batch`, in order.
pub fn put_pages(batch: &mut WriteBatch, tenant: &TenantId, pages: PageBatch) {
    for op in pages.ops {
        match op {
            PageOp::Put(key, page) => batch.put(tenant, PAGES, &page_key(key), &page),
            PageOp::Delete(key) => batch.delete(tenant, PAGES, &page_key(key)),
        }
    }
}

fn store_error(e: memforest_engine::Error) -> StoreError {
    StoreError(Box::new(e))
}

/// A `NodeStore` committing every `PageBatch` as one engine batch at `durability`.
#[derive(Debug)]
pub struct EngineNodeStore<'a> {
    db: &'a Db,
    tenant: TenantId,
    durability: Durability,
}

impl<'a> EngineNodeStore<'a> {
    /// A store for `tenant`'s trees in `db`.
    #[must_use]
    pub fn new(db: &'a Db, tenant: TenantId, durability: Durability) -> Self {
        Self {
            db,
            tenant,
            durability,
        }
    }
}

impl NodeStore for EngineNodeStore<'_> {
    fn get(&self, key: PageKey) -> Result<Option<Vec<u8>>, StoreError> {
        let v = self.db.get(&self.tenant, PAGES, &page_key(key));
        Ok(v.map_err(store_error)?.map(|b| b.to_vec()))
    }

    fn apply(&mut self, batch: PageBatch) -> Result<(), StoreError> {
        let mut b = WriteBatch::new();
        put_pages(&mut b, &self.tenant, batch);
        self.db.write(&b, self.durability).map_err(store_error)?;
        Ok(())
    }
}

/// A `NodeStore` that stages page ops into a caller's [`WriteBatch`]; reads see the staged
/// pages first, then the database. Commit the batch with `Db::write`.
#[derive(Debug)]
pub struct StagedNodeStore<'a> {
    db: &'a Db,
    tenant: TenantId,
    batch: &'a mut WriteBatch,
}

impl<'a> StagedNodeStore<'a> {
    /// A store staging `tenant`'s page ops into `batch`.
    #[must_use]
    pub fn new(db: &'a Db, tenant: TenantId, batch: &'a mut WriteBatch) -> Self {
        Self { db, tenant, batch }
    }
}

impl NodeStore for StagedNodeStore<'_> {
    fn get(&self, key: PageKey) -> Result<Option<Vec<u8>>, StoreError> {
        match self.batch.staged(&self.tenant, PAGES, &page_key(key)) {
            Some(staged) => Ok(staged.map(<[u8]>::to_vec)),
            None => {
                let v = self.db.get(&self.tenant, PAGES, &page_key(key));
                Ok(v.map_err(store_error)?.map(|b| b.to_vec()))
            }
        }
    }

    fn apply(&mut self, batch: PageBatch) -> Result<(), StoreError> {
        put_pages(self.batch, &self.tenant, batch);
        Ok(())
    }
}

/// A read-only `NodeStore` over one tenant's pages at a registered snapshot: every page a
/// reader loads comes from the same state, so the CRCs a page records for its children
/// match the child pages even while writers rewrite the tree (`memforest verify` and the
/// summary scheduler read trees this way). Writing through it fails with
/// `InvalidArgument`.
#[derive(Debug)]
pub struct SnapshotNodeStore<'a> {
    db: &'a Db,
    tenant: &'a TenantId,
    snapshot: &'a Snapshot,
}

impl<'a> SnapshotNodeStore<'a> {
    /// `tenant`'s pages in `db` as `snapshot` (from [`Db::snapshot`]) sees them.
    #[must_use]
    pub fn new(db: &'a Db, tenant: &'a TenantId, snapshot: &'a Snapshot) -> Self {
        Self {
            db,
            tenant,
            snapshot,
        }
    }
}

impl NodeStore for SnapshotNodeStore<'_> {
    fn get(&self, key: PageKey) -> Result<Option<Vec<u8>>, StoreError> {
        let v = self
            .db
            .get_at(self.snapshot, self.tenant, PAGES, &page_key(key));
        Ok(v.map_err(store_error)?.map(|b| b.to_vec()))
    }

    fn apply(&mut self, _: PageBatch) -> Result<(), StoreError> {
        Err(store_error(Error::InvalidArgument(
            "pages read at a snapshot cannot be written",
        )))
    }
}
