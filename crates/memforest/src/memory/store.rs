//! Storage access for the memory layer: [`Kv`] reads and writes the engine directly (the
//! scheduler thread has no `Db` handle), and [`Staged`] collects one atomic `WriteBatch`
//! while reading its own staged writes back (the memory layer's equivalent of
//! [`crate::StagedNodeStore`], covering every table, MemTree pages included).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use memforest_engine::{Db, Snapshot, TenantId, WriteBatch};
use memforest_tree::{NodeStore, PageBatch, PageKey, StoreError};
use memforest_wal::Durability;

use crate::node_store::{page_key, SnapshotNodeStore};
use crate::recall::write_through::{Caches, Changes};
use crate::schema::Table;

/// Direct engine access, shared with the scheduler thread, and the read path's caches
/// that commits keep current.
#[derive(Debug, Clone)]
pub struct Kv {
    db: Arc<Db>,
    caches: Caches,
}

impl Kv {
    /// Access through `db`; commits keep `caches` current.
    pub(crate) fn new(db: Arc<Db>, caches: Caches) -> Self {
        Self { db, caches }
    }

    /// Whether the store was opened read-only (nothing can be written).
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.db.is_read_only()
    }

    /// The current value of `key`.
    ///
    /// # Errors
    /// Engine read errors.
    pub fn get(
        &self,
        tenant: &TenantId,
        table: Table,
        key: &[u8],
    ) -> memforest_engine::Result<Option<Bytes>> {
        self.db.get(tenant, table.into(), key)
    }

    /// A snapshot of the latest published state, held until dropped.
    pub(crate) fn snapshot(&self) -> Snapshot {
        self.db.snapshot()
    }

    /// `tenant`'s MemTree pages as `snapshot` sees them (read-only).
    pub(crate) fn pages_at<'a>(
        &'a self,
        tenant: &'a TenantId,
        snapshot: &'a Snapshot,
    ) -> SnapshotNodeStore<'a> {
        SnapshotNodeStore::new(&self.db, tenant, snapshot)
    }

    /// Every `(key, value)` of `table` whose key starts with `prefix` (keys relative to the
    /// table).
    ///
    /// # Errors
    /// Engine read errors.
    pub fn scan_prefix(
        &self,
        tenant: &TenantId,
        table: Table,
        prefix: &[u8],
    ) -> memforest_engine::Result<Vec<(Bytes, Bytes)>> {
        self.db
            .scan_prefix(tenant, table.into(), prefix, None)?
            .collect()
    }

    /// Commits `batch`.
    ///
    /// # Errors
    /// Engine write errors.
    pub fn write(
        &self,
        batch: &WriteBatch,
        durability: Durability,
    ) -> memforest_engine::Result<u64> {
        self.db.write(batch, durability)
    }
}

/// The staged writes of one unit of work for one tenant: the latest value (or deletion) of
/// every key it wrote, read back by its own reads and committed as one `WriteBatch`. Only
/// the last write of a key is committed (a tree page rewritten by many inserts of one
/// session is written once), which is the same final state as applying every write in
/// order.
#[derive(Debug)]
pub struct Staged<'a> {
    kv: &'a Kv,
    tenant: TenantId,
    overlay: HashMap<(Table, Vec<u8>), Option<Vec<u8>>>,
}

impl<'a> Staged<'a> {
    /// An empty unit of work for `tenant`.
    #[must_use]
    pub fn new(kv: &'a Kv, tenant: TenantId) -> Self {
        Self {
            kv,
            tenant,
            overlay: HashMap::new(),
        }
    }

    /// The tenant.
    #[must_use]
    pub fn tenant(&self) -> &TenantId {
        &self.tenant
    }

    /// The value of `key`: staged first, then the engine.
    ///
    /// # Errors
    /// Engine read errors.
    pub fn get(&self, table: Table, key: &[u8]) -> memforest_engine::Result<Option<Vec<u8>>> {
        if let Some(v) = self.overlay.get(&(table, key.to_vec())) {
            return Ok(v.clone());
        }
        Ok(self.kv.get(&self.tenant, table, key)?.map(|b| b.to_vec()))
    }

    /// Whether this unit of work wrote `key`: `Some(true)` put, `Some(false)` deleted,
    /// `None` untouched (no engine read).
    #[must_use]
    pub fn staged(&self, table: Table, key: &[u8]) -> Option<bool> {
        self.overlay
            .get(&(table, key.to_vec()))
            .map(Option::is_some)
    }

    /// Every `(key, value)` of `table` whose key starts with `prefix`, in key order, as
    /// this unit of work would leave them: the engine's, with the staged puts added and
    /// the staged deletes left out. O(engine rows + staged keys).
    ///
    /// # Errors
    /// Engine read errors.
    pub fn scan_prefix(
        &self,
        table: Table,
        prefix: &[u8],
    ) -> memforest_engine::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut rows: std::collections::BTreeMap<Vec<u8>, Vec<u8>> = self
            .kv
            .scan_prefix(&self.tenant, table, prefix)?
            .into_iter()
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
        for ((t, key), value) in &self.overlay {
            if *t != table || !key.starts_with(prefix) {
                continue;
            }
            match value {
                Some(v) => rows.insert(key.clone(), v.clone()),
                None => rows.remove(key),
            };
        }
        Ok(rows.into_iter().collect())
    }

    /// Stages a put.
    pub fn put(&mut self, table: Table, key: &[u8], value: Vec<u8>) {
        self.overlay.insert((table, key.to_vec()), Some(value));
    }

    /// Stages a delete.
    pub fn delete(&mut self, table: Table, key: &[u8]) {
        self.overlay.insert((table, key.to_vec()), None);
    }

    /// True when nothing is staged.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.overlay.is_empty()
    }

    /// Commits everything staged as one batch; returns its last seqno (0 when empty).
    /// The caller holds the forest lock: the commit keeps the read path's caches current
    /// under it (`recall::write_through`).
    ///
    /// # Errors
    /// Engine write errors (nothing is applied).
    pub fn commit(self, durability: Durability) -> memforest_engine::Result<u64> {
        if self.overlay.is_empty() {
            return Ok(0);
        }
        let mut writes: Vec<_> = self.overlay.into_iter().collect();
        writes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let changes = Changes::bump(
            &self.tenant,
            writes
                .iter()
                .map(|((table, key), value)| (*table, &key[..], value.as_deref())),
        );
        let mut batch = WriteBatch::new();
        for ((table, key), value) in &writes {
            match value {
                Some(v) => batch.put(&self.tenant, (*table).into(), key, v),
                None => batch.delete(&self.tenant, (*table).into(), key),
            }
        }
        let seqno = self.kv.write(&batch, durability)?;
        changes.apply(&self.tenant, &self.kv.caches);
        Ok(seqno)
    }
}

impl NodeStore for Staged<'_> {
    fn get(&self, key: PageKey) -> Result<Option<Vec<u8>>, StoreError> {
        Staged::get(self, Table::NodePages, &page_key(key)).map_err(|e| StoreError(Box::new(e)))
    }

    fn apply(&mut self, batch: PageBatch) -> Result<(), StoreError> {
        for op in batch.ops {
            match op {
                memforest_tree::store::PageOp::Put(k, page) => {
                    self.put(Table::NodePages, &page_key(k), page);
                }
                // A node's summary embedding goes with its page (node ids are never reused
                // while the tree exists), so no vector of a freed node's summary, which may
                // encode forgotten text, outlives it.
                memforest_tree::store::PageOp::Delete(k) => {
                    self.delete(Table::NodePages, &page_key(k));
                    self.delete(Table::Embeddings, &page_key(k));
                }
            }
        }
        Ok(())
    }
}
