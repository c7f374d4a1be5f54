//! [`Memory::verify`]: the engine's checks plus every MemTree's invariants.

use memforest_engine::{Error, VerifyReport};
use memforest_tree::{MemTree, TreeId};
use serde::Serialize;

use crate::memory::MemoryError;
use crate::node_store::SnapshotNodeStore;
use crate::schema::Table;
use crate::Memory;

/// What a clean [`Memory::verify`] checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemoryVerifyReport {
    /// The engine's report (files, WAL, damage).
    #[serde(flatten)]
    pub store: VerifyReport,
    /// Trees opened and verified.
    pub trees: u64,
    /// Tree nodes visited.
    pub tree_nodes: u64,
}

impl Memory {
    /// The engine's checks ([`memforest_engine::Db::verify`]: manifest, level invariants,
    /// every segment file's checksums, the WAL), then every MemTree of every tenant read at
    /// one snapshot: `MemTree::verify` (key order, time ranges, fill, child references and
    /// CRCs, dirty flags, summaries' inputs). Writes nothing.
    ///
    /// # Errors
    /// The first damage found: the engine's errors, or [`Error::Corrupt`] naming the
    /// store's directory, byte offset 0 and a reason naming the tenant and tree.
    pub fn verify(&self) -> Result<MemoryVerifyReport, MemoryError> {
        let mut r = MemoryVerifyReport {
            store: self.db.verify()?,
            ..MemoryVerifyReport::default()
        };
        let snapshot = self.snapshot();
        for tenant in self.tenants()? {
            let store = SnapshotNodeStore::new(&self.db, &tenant, &snapshot);
            for kv in self
                .db
                .scan_prefix(&tenant, Table::Trees.into(), &[], Some(&snapshot))?
            {
                let (k, _) = kv?;
                let tree_error = |reason: String| Error::Corrupt {
                    path: self.db.dir().to_path_buf(),
                    offset: 0,
                    reason: format!(
                        "tenant {:?} tree record {k:02x?}: {reason}",
                        String::from_utf8_lossy(tenant.name())
                    ),
                };
                let id = <[u8; 8]>::try_from(k.as_ref())
                    .map(u64::from_be_bytes)
                    .map_err(|_| tree_error("the key is not 8 bytes".into()))?;
                let tree =
                    MemTree::open(&store, TreeId(id)).map_err(|e| tree_error(e.to_string()))?;
                let shape = tree.verify(&store).map_err(|e| tree_error(e.to_string()))?;
                r.trees += 1;
                r.tree_nodes += shape.nodes.iter().sum::<u64>();
            }
        }
        Ok(r)
    }
}
