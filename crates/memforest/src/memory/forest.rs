//! [`Forest`]: the in-memory handles of every tenant's MemTrees (meta page + dirty sets)
//! and the scene keyword index, guarded by one mutex in the runtime. Everything here is a
//! cache of what the engine stores; after a failed commit a tenant's entry is dropped and
//! reloaded on next use.

use std::collections::{HashMap, HashSet};

use memforest_tree::{MemTree, NodeStore, TreeConfig, TreeId, TreeKind};

use crate::memory::options::MemoryOptions;
use crate::memory::record::{self, SceneState, TreeRecord, SCENE_PREFIX};
use crate::memory::store::{Kv, Staged};
use crate::memory::MemoryError;
use crate::schema::Table;
use memforest_engine::TenantId;

/// One tenant's cached trees and open scenes.
#[derive(Debug, Default)]
pub struct TenantForest {
    /// Loaded trees by id.
    pub trees: HashMap<u64, MemTree>,
    /// Open scenes (not full, among the most recently joined) by number, loaded on first
    /// use; `None` means "reload" (the lifecycle code resets it after a change).
    pub scenes: Option<HashMap<u64, SceneState>>,
    /// Ids of loaded trees that have dirty nodes (what the scheduler looks at).
    pub dirty: HashSet<u64>,
    /// Normalized keys of the entities whose stored state is active, learned from a read
    /// or an activation: routing never rewrites an active state, so a fact naming one of
    /// them goes to its tree without reading the state again (once the state has been
    /// compacted to the last level, that read probes every level). Deleting the entity's
    /// tree removes its key here.
    pub active_entities: HashSet<String>,
    /// Keyword -> open scene numbers whose profile holds it (rebuilt with `scenes`).
    pub scene_index: HashMap<String, Vec<u64>>,
    /// The scene clock (see [`SceneState::tick`]).
    scene_clock: u64,
    /// [`TenantForest::trim`] drops clean trees once more than this many are cached.
    trim_at: usize,
}

/// Every tenant's cache.
#[derive(Debug, Default)]
pub struct Forest {
    /// By tenant.
    pub tenants: HashMap<TenantId, TenantForest>,
}

impl Forest {
    /// Total dirty nodes per level (index 0 = level 1) over every loaded tree.
    #[must_use]
    pub fn dirty_by_level(&self) -> Vec<u64> {
        let mut out: Vec<u64> = Vec::new();
        for t in self.dirty_trees() {
            let top = t.dirty().top_level();
            for level in 1..=top {
                let n = t.dirty().level(level).len() as u64;
                let idx = usize::from(level - 1);
                if out.len() <= idx {
                    out.resize(idx + 1, 0);
                }
                if let Some(slot) = out.get_mut(idx) {
                    *slot += n;
                }
            }
        }
        out
    }

    /// Total dirty nodes.
    #[must_use]
    pub fn dirty_total(&self) -> u64 {
        self.dirty_trees().map(|t| t.dirty().len() as u64).sum()
    }

    /// True when some loaded tree has a dirty node (stops at the first one).
    #[must_use]
    pub fn any_dirty(&self) -> bool {
        self.dirty_trees().any(|t| !t.dirty().is_empty())
    }

    /// The loaded trees with dirty nodes.
    pub fn dirty_trees(&self) -> impl Iterator<Item = &MemTree> {
        self.tenants
            .values()
            .flat_map(|f| f.dirty.iter().filter_map(|id| f.trees.get(id)))
    }
}

/// Tree `id` opened from its meta page in `store`; `None` when it does not exist.
///
/// # Errors
/// Tree page corruption; store errors.
pub fn open_tree<S: NodeStore + ?Sized>(
    store: &S,
    id: u64,
) -> Result<Option<MemTree>, MemoryError> {
    match MemTree::open(store, TreeId(id)) {
        Ok(t) => Ok(Some(t)),
        Err(memforest_tree::TreeError::MissingPage { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

impl TenantForest {
    /// The tree `id`, loaded from the store when not cached; `None` when it does not exist.
    ///
    /// # Errors
    /// Tree page corruption; engine errors.
    pub fn tree(&mut self, st: &Staged<'_>, id: u64) -> Result<Option<&mut MemTree>, MemoryError> {
        match self.trees.entry(id) {
            std::collections::hash_map::Entry::Occupied(e) => Ok(Some(e.into_mut())),
            std::collections::hash_map::Entry::Vacant(v) => {
                Ok(open_tree(st, id)?.map(|t| v.insert(t)))
            }
        }
    }

    /// The tree of `kind` labelled `label`, created (with its `Trees` record) when absent.
    ///
    /// # Errors
    /// As [`TenantForest::tree`]; encode errors.
    pub fn ensure_tree(
        &mut self,
        st: &mut Staged<'_>,
        kind: TreeKind,
        label: &str,
        config: &TreeConfig,
    ) -> Result<&mut MemTree, MemoryError> {
        let id = record::tree_id(kind, label);
        if self.tree(st, id)?.is_none() {
            let t = MemTree::create(st, TreeId(id), kind, label, config)?;
            let rec = TreeRecord {
                kind: kind.as_u8(),
                label: label.to_owned(),
            };
            st.put(Table::Trees, &id.to_be_bytes(), record::encode(&rec)?);
            self.trees.insert(id, t);
        }
        self.trees
            .get_mut(&id)
            .ok_or(MemoryError::Invariant("a tree just created is not cached"))
    }

    /// The open scenes, loaded from `RouterState` on first use: the scenes holding fewer
    /// than `scene_capacity` facts, at most `scene_open_limit` of them (the newest numbers
    /// count as the most recently joined), with their keyword index.
    ///
    /// # Errors
    /// Engine read errors; corrupt scene records.
    pub fn scenes(
        &mut self,
        kv: &Kv,
        tenant: &TenantId,
        opts: &MemoryOptions,
    ) -> Result<&mut HashMap<u64, SceneState>, MemoryError> {
        if self.scenes.is_none() {
            self.scene_index.clear();
            let mut map = HashMap::new();
            for (k, v) in kv.scan_prefix(tenant, Table::RouterState, &[SCENE_PREFIX])? {
                let n = record::be_u64(k.get(1..).unwrap_or_default())
                    .ok_or(MemoryError::Invariant("short scene key"))?;
                let mut state: SceneState = record::decode(&v, "scene state")?;
                if state.facts as usize >= opts.scene_capacity {
                    continue;
                }
                for (k, _) in &state.counts {
                    self.scene_index.entry(k.clone()).or_default().push(n);
                }
                state.tick = n;
                self.scene_clock = self.scene_clock.max(n);
                map.insert(n, state);
            }
            self.scenes = Some(map);
            self.limit_open_scenes(opts.scene_open_limit);
        }
        self.scenes
            .as_mut()
            .ok_or(MemoryError::Invariant("scene map not loaded"))
    }

    /// Drops the cached trees with no dirty node once more than `limit` (or twice what the
    /// last trim kept, so trimming stays amortized O(1) per insert) are cached, and forgets
    /// the active entities once more than `limit` are remembered (each is read again on its
    /// next mention). Call only when every change to the trees is committed: a dropped tree
    /// reloads from the store.
    pub fn trim(&mut self, limit: usize) {
        if self.active_entities.len() > limit {
            self.active_entities.clear();
        }
        if self.trees.len() <= self.trim_at.max(limit) {
            return;
        }
        let dirty = &self.dirty;
        self.trees
            .retain(|id, t| dirty.contains(id) || !t.dirty().is_empty());
        self.trim_at = self.trees.len().saturating_mul(2);
    }

    /// Advances the scene clock.
    pub fn next_scene_tick(&mut self) -> u64 {
        self.scene_clock += 1;
        self.scene_clock
    }

    /// Drops scene `n` from the open set and the keyword index (its stored state and tree
    /// stay; it just takes no more facts).
    pub fn close_scene(&mut self, n: u64) {
        let Some(state) = self.scenes.as_mut().and_then(|s| s.remove(&n)) else {
            return;
        };
        for (k, _) in &state.counts {
            if let Some(list) = self.scene_index.get_mut(k) {
                list.retain(|x| *x != n);
                if list.is_empty() {
                    self.scene_index.remove(k);
                }
            }
        }
    }

    /// Closes the least recently joined open scenes until at most `limit` are open.
    pub fn limit_open_scenes(&mut self, limit: usize) {
        loop {
            let oldest = match &self.scenes {
                Some(s) if s.len() > limit => s.iter().min_by_key(|(_, st)| st.tick).map(|e| *e.0),
                _ => None,
            };
            match oldest {
                Some(n) => self.close_scene(n),
                None => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The remembered active entities stay bounded: past the limit a trim forgets them all
    /// (routing reads each state again on its next mention), and up to it keeps them.
    #[test]
    fn trim_bounds_the_remembered_active_entities() {
        let mut tf = TenantForest::default();
        tf.active_entities
            .extend((0..4).map(|i| format!("entity {i}")));
        tf.trim(4);
        assert_eq!(tf.active_entities.len(), 4);
        tf.active_entities.insert("entity 4".to_owned());
        tf.trim(4);
        assert!(tf.active_entities.is_empty());
    }
}
