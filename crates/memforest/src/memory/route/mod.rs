//! Routing: which MemTrees a cell or fact goes to (paper, "Scopes"). Every tree insert,
//! membership row, router-state change and dirty mark is staged in the caller's batch, so
//! it commits atomically with the facts that caused it.

mod entity;
mod scene;

use std::collections::{BTreeSet, HashSet};

use memforest_tree::{LeafKey, Payload, TimeRange, TreeKind, USER_ENTITY};

use crate::memory::extract::Origin;
use crate::memory::forest::TenantForest;
use crate::memory::options::MemoryOptions;
use crate::memory::record::{self, FactRecord};
use crate::memory::store::{Kv, Staged};
use crate::memory::MemoryError;
use crate::schema::Table;

/// One unit of routing work over a tenant's staged batch.
#[derive(Debug)]
pub struct Router<'s, 'a> {
    /// The batch.
    pub st: &'s mut Staged<'a>,
    /// The tenant's tree cache.
    pub forest: &'s mut TenantForest,
    /// Engine access (for loading router state).
    pub kv: &'s Kv,
    /// Settings.
    pub opts: &'s MemoryOptions,
    /// Trees that got a leaf.
    pub touched: BTreeSet<u64>,
    /// Facts created in this batch: their memberships can only be in the batch itself, so
    /// checking them needs no engine read.
    pub fresh: HashSet<u64>,
    /// Tree nodes this batch newly marked dirty (for the backlog estimate).
    pub dirtied: u64,
}

/// A fact being routed.
#[derive(Debug, Clone, Copy)]
pub struct FactRef<'f> {
    /// Fact id.
    pub id: u64,
    /// Its record (after the upsert).
    pub rec: &'f FactRecord,
    /// True for a new fact, false for a merged occurrence.
    pub new: bool,
    /// Session of this occurrence.
    pub session: &'f str,
    /// The fact's embedding, when an embedder is configured.
    pub embedding: Option<&'f [f32]>,
}

fn range(t: (i64, i64)) -> Result<TimeRange, MemoryError> {
    TimeRange::new(t.0, t.1.max(t.0)).ok_or(MemoryError::Invariant("bad time range"))
}

impl Router<'_, '_> {
    /// Inserts a leaf into the tree of `kind`/`label` (creating it), unless `payload` is a
    /// fact already in that tree or the tree holds the leaf already; records the membership
    /// and the tree's dirty mark.
    ///
    /// # Errors
    /// Tree and engine errors.
    pub fn insert(
        &mut self,
        kind: TreeKind,
        label: &str,
        payload: Payload,
        time: (i64, i64),
        text: &str,
    ) -> Result<(), MemoryError> {
        let tree_id = record::tree_id(kind, label);
        let member = record::pair_key(payload.id, tree_id);
        if payload.kind == memforest_tree::PayloadKind::Fact {
            let member_exists = if self.fresh.contains(&payload.id) {
                self.st.staged(Table::Memberships, &member) == Some(true)
            } else {
                self.st.get(Table::Memberships, &member)?.is_some()
            };
            if member_exists {
                return Ok(());
            }
        }
        let config = self.opts.trees;
        let tree = self.forest.ensure_tree(self.st, kind, label, &config)?;
        let key = LeafKey {
            time: range(time)?,
            payload,
        };
        let before = tree.dirty().len();
        // A leaf already there with this text is kept as it is: a salvage
        // (`RecoveryMode::SkipAnyCorrupted`) can lose the batch that recorded a message and
        // keep a later one holding its leaf's page; adding the message again completes it.
        tree.insert(self.st, key, text)?;
        self.dirtied += tree.dirty().len().saturating_sub(before) as u64;
        if payload.kind == memforest_tree::PayloadKind::Fact {
            self.st.put(Table::Memberships, &member, Vec::new());
        }
        self.st
            .put(Table::DirtyMarks, &tree_id.to_be_bytes(), Vec::new());
        self.forest.dirty.insert(tree_id);
        self.touched.insert(tree_id);
        Ok(())
    }

    /// Routes one fact: `entity:user` for user-origin facts, entity trees (with
    /// activation and backfill), and a scene for a new fact.
    ///
    /// # Errors
    /// Tree and engine errors.
    pub fn route_fact(&mut self, fact: FactRef<'_>) -> Result<(), MemoryError> {
        if fact.rec.origin == Origin::User {
            self.insert(
                TreeKind::Entity,
                USER_ENTITY,
                Payload::fact(fact.id),
                fact.rec.time,
                &fact.rec.text,
            )?;
        }
        self.route_entities(fact)?;
        if fact.new {
            self.route_scene(fact)?;
        }
        Ok(())
    }
}
