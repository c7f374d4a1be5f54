//! [`Memory::user_stats`]: what a user's memory holds, counted from the store.

use memforest_engine::{Snapshot, TenantId};
use memforest_tree::{MemTree, TreeId};
use serde::Serialize;

use crate::api::user;
use crate::memory::record::{self, FAILED_PREFIX, PENDING_PREFIX, SESSION_PREFIX};
use crate::memory::MemoryError;
use crate::node_store::SnapshotNodeStore;
use crate::schema::Table;
use crate::Memory;

/// What one user's memory holds, read at one snapshot ([`Memory::user_stats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UserStats {
    /// Sessions (including the one [`Memory::update`] writes to).
    pub sessions: u64,
    /// Stored messages (raw turns).
    pub messages: u64,
    /// Memories (canonical facts), current and superseded.
    pub memories: u64,
    /// MemTrees (one per session, entity and scene the user has).
    pub trees: u64,
    /// Tree nodes whose summary waits to be regenerated.
    pub dirty_summaries: u64,
    /// Parts of exchanges whose extraction has not committed yet (retried in the
    /// background by a writable handle).
    pub pending_extractions: u64,
    /// Parts of exchanges given up as never extractable (their messages stay stored).
    pub failed_extractions: u64,
}

impl Memory {
    /// Counts what `user`'s memory holds. Reads every key of the user's sessions, turns,
    /// facts and trees once (O(records)); works on read-only handles. An unknown user has
    /// all zeros.
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a bad user; [`MemoryError::Engine`] for read errors; a tree
    /// whose meta page does not decode is [`MemoryError::Tree`].
    pub fn user_stats(&self, user: &str) -> Result<UserStats, MemoryError> {
        let tenant = user::tenant(user)?;
        let snapshot = self.snapshot();
        let count = |table: Table, prefix: &[u8]| -> Result<u64, MemoryError> {
            let mut n = 0;
            for kv in self
                .db
                .scan_prefix(&tenant, table.into(), prefix, Some(&snapshot))?
            {
                kv?;
                n += 1;
            }
            Ok(n)
        };
        let (trees, dirty_summaries) = self.tree_counts(&tenant, &snapshot)?;
        Ok(UserStats {
            sessions: count(Table::Sessions, &[SESSION_PREFIX])?,
            messages: count(Table::Turns, &[])?,
            memories: count(Table::Facts, &[])?,
            trees,
            dirty_summaries,
            pending_extractions: count(Table::RouterState, &[PENDING_PREFIX])?,
            failed_extractions: count(Table::RouterState, &[FAILED_PREFIX])?,
        })
    }

    /// Trees of `tenant` and their dirty nodes, at `snapshot`.
    fn tree_counts(
        &self,
        tenant: &TenantId,
        snapshot: &Snapshot,
    ) -> Result<(u64, u64), MemoryError> {
        let store = SnapshotNodeStore::new(&self.db, tenant, snapshot);
        let (mut trees, mut dirty) = (0, 0);
        for kv in self
            .db
            .scan_prefix(tenant, Table::Trees.into(), &[], Some(snapshot))?
        {
            let (k, _) = kv?;
            let Some(id) = record::be_u64(&k) else {
                return Err(MemoryError::Corrupt {
                    what: "tree record key",
                    detail: format!("{k:02x?} is not 8 bytes"),
                });
            };
            let tree = MemTree::open(&store, TreeId(id))?;
            trees += 1;
            dirty += tree.dirty().len() as u64;
        }
        Ok((trees, dirty))
    }
}
