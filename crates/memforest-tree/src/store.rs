//! The storage seam: where node pages live.
//!
//! The engine implements [`NodeStore`] over its LSM (one key per page, one write batch per
//! [`PageBatch`]); [`MemNodeStore`] keeps pages in a `HashMap` for tests and benchmarks and
//! counts page reads and writes so tests can assert the cost of an operation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::idhash::IdBuildHasher;
use crate::node::{NodeId, TreeId};

/// Key of one page: the tree it belongs to and the node id within it ([`NodeId::META`] for the
/// tree's meta page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageKey {
    /// Owning tree.
    pub tree: TreeId,
    /// Node within the tree.
    pub node: NodeId,
}

/// One change in a [`PageBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOp {
    /// Write (or overwrite) a page.
    Put(PageKey, Vec<u8>),
    /// Remove a page (absent pages are fine).
    Delete(PageKey),
}

/// The page writes of one tree operation, to be applied atomically and in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageBatch {
    /// The changes, in order.
    pub ops: Vec<PageOp>,
}

impl PageBatch {
    /// Adds a page write.
    pub fn put(&mut self, key: PageKey, page: Vec<u8>) {
        self.ops.push(PageOp::Put(key, page));
    }

    /// Adds a page removal.
    pub fn delete(&mut self, key: PageKey) {
        self.ops.push(PageOp::Delete(key));
    }
}

/// A failure reported by a [`NodeStore`] implementation (I/O, the engine's own corruption
/// checks, ...), passed through unchanged.
#[derive(Debug, thiserror::Error)]
#[error("node store: {0}")]
pub struct StoreError(pub Box<dyn std::error::Error + Send + Sync>);

/// Page storage for MemTrees; many trees may share one store (pages are keyed by tree).
pub trait NodeStore {
    /// The page stored under `key`, or `None`.
    ///
    /// # Errors
    /// The implementation's read failure.
    fn get(&self, key: PageKey) -> Result<Option<Vec<u8>>, StoreError>;

    /// Applies every op of `batch`, atomically: after a crash either all of them or none are
    /// visible.
    ///
    /// # Errors
    /// The implementation's write failure; the tree then keeps its previous in-memory state.
    fn apply(&mut self, batch: PageBatch) -> Result<(), StoreError>;
}

/// Page read/write counts of a [`MemNodeStore`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// `get` calls.
    pub reads: u64,
    /// Pages written (`Put` ops).
    pub writes: u64,
    /// Pages removed (`Delete` ops).
    pub deletes: u64,
}

/// An in-memory [`NodeStore`] for tests and benchmarks.
#[derive(Debug, Default)]
pub struct MemNodeStore {
    pages: HashMap<PageKey, Vec<u8>, IdBuildHasher>,
    reads: AtomicU64,
    writes: u64,
    deletes: u64,
}

impl MemNodeStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts so far.
    #[must_use]
    pub fn stats(&self) -> StoreStats {
        StoreStats {
            reads: self.reads.load(Ordering::Relaxed),
            writes: self.writes,
            deletes: self.deletes,
        }
    }

    /// Number of pages held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// True when no page is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Mutable access to a stored page, for corruption tests.
    pub fn page_mut(&mut self, key: PageKey) -> Option<&mut Vec<u8>> {
        self.pages.get_mut(&key)
    }
}

impl NodeStore for MemNodeStore {
    fn get(&self, key: PageKey) -> Result<Option<Vec<u8>>, StoreError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        Ok(self.pages.get(&key).cloned())
    }

    fn apply(&mut self, batch: PageBatch) -> Result<(), StoreError> {
        for op in batch.ops {
            match op {
                PageOp::Put(key, page) => {
                    self.writes += 1;
                    self.pages.insert(key, page);
                }
                PageOp::Delete(key) => {
                    self.deletes += 1;
                    self.pages.remove(&key);
                }
            }
        }
        Ok(())
    }
}
