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

use crate::batch::{Op, WriteBatch};
use crate::core::Core;
use crate::db::Db;
use crate::error::Error;
use crate::key::{Table, TenantId};
use crate::snapshot::Snapshot;

/// The key of `page` within the node-pages table.
#[must_use]
pub fn page_key(page: PageKey) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&page.tree.0.to_be_bytes());
    out[8..].copy_from_slice(&page.node.0.to_be_bytes());
    out
}

impl WriteBatch {
    /// Adds the ops of a MemTree `PageBatch` for `tenant`'s trees, in order.
    pub fn put_pages(&mut self, tenant: &TenantId, pages: PageBatch) {
        for op in pages.ops {
            match op {
                PageOp::Put(key, page) => self.put(tenant, Table::NodePages, &page_key(key), &page),
                PageOp::Delete(key) => self.delete(tenant, Table::NodePages, &page_key(key)),
            }
        }
    }
}

fn store_error(e: crate::Error) -> StoreError {
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
        let v = self.db.get(&self.tenant, Table::NodePages, &page_key(key));
        Ok(v.map_err(store_error)?.map(|b| b.to_vec()))
    }

    fn apply(&mut self, batch: PageBatch) -> Result<(), StoreError> {
        let mut b = WriteBatch::new();
        b.put_pages(&self.tenant, batch);
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
        let full = self.tenant.key(Table::NodePages, &page_key(key));
        let staged = self
            .batch
            .wal_batch()
            .entries()
            .iter()
            .rev()
            .find(|e| e.key == full);
        match staged {
            Some(e) if e.kind == Op::Put as u8 => Ok(Some(e.value.clone())),
            Some(_) => Ok(None),
            None => {
                let v = self.db.get(&self.tenant, Table::NodePages, &page_key(key));
                Ok(v.map_err(store_error)?.map(|b| b.to_vec()))
            }
        }
    }

    fn apply(&mut self, batch: PageBatch) -> Result<(), StoreError> {
        self.batch.put_pages(&self.tenant, batch);
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
    core: &'a Core,
    tenant: &'a TenantId,
    snapshot: &'a Snapshot,
}

impl<'a> SnapshotNodeStore<'a> {
    /// `tenant`'s pages in `db` as `snapshot` (from [`Db::snapshot`]) sees them.
    #[must_use]
    pub fn new(db: &'a Db, tenant: &'a TenantId, snapshot: &'a Snapshot) -> Self {
        Self::over(db.core(), tenant, snapshot)
    }

    /// The same over the engine core (for the threads that hold no `Db`).
    pub(crate) fn over(core: &'a Core, tenant: &'a TenantId, snapshot: &'a Snapshot) -> Self {
        Self {
            core,
            tenant,
            snapshot,
        }
    }
}

impl NodeStore for SnapshotNodeStore<'_> {
    fn get(&self, key: PageKey) -> Result<Option<Vec<u8>>, StoreError> {
        let full = self.tenant.key(Table::NodePages, &page_key(key));
        let v = self.core.get(&full, self.snapshot.seqno());
        Ok(v.map_err(store_error)?.map(|b| b.to_vec()))
    }

    fn apply(&mut self, _: PageBatch) -> Result<(), StoreError> {
        Err(store_error(Error::InvalidArgument(
            "pages read at a snapshot cannot be written",
        )))
    }
}
