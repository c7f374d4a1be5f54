//! Removing leaves from MemTrees (with the tree's own B-tree rebalancing, which marks every
//! changed node and its ancestors dirty so the scheduler regenerates their summaries) and
//! deleting a tree that became empty with everything that names it.

use std::collections::BTreeSet;

use memforest_tree::{LeafKey, MemTree, NodeBody, NodeId, Payload, TimeRange, TreeKind};

use crate::memory::forest::TenantForest;
use crate::memory::record::{
    self, EntityState, SceneState, TreeRecord, ENTITY_PREFIX, SCENE_PREFIX,
};
use crate::memory::store::{Kv, Staged};
use crate::memory::MemoryError;
use crate::schema::Table;

/// Finds the key of the leaf holding `payload`: first by the candidate time ranges (cheap
/// descents), then by walking the tree.
fn find_leaf(
    st: &Staged<'_>,
    tree: &MemTree,
    payload: Payload,
    times: &[TimeRange],
) -> Result<Option<LeafKey>, MemoryError> {
    for &time in times {
        let key = LeafKey { time, payload };
        if let Some(&last) = tree.path(st, &key)?.last() {
            let node = tree.node(st, last)?;
            if node.leaves().iter().any(|l| l.key == key) {
                return Ok(Some(key));
            }
        }
    }
    let Some(root) = tree.meta().root else {
        return Ok(None);
    };
    let mut stack: Vec<NodeId> = vec![root.id];
    while let Some(id) = stack.pop() {
        let node = tree.node(st, id)?;
        match &node.body {
            NodeBody::Leaves(l) => {
                if let Some(e) = l.iter().find(|e| e.key.payload == payload) {
                    return Ok(Some(e.key));
                }
            }
            NodeBody::Children(c) => stack.extend(c.iter().map(|c| c.id)),
        }
    }
    Ok(None)
}

/// Removes the leaf of `payload` from tree `id` (staged); the tree is deleted when it
/// becomes empty. Returns whether a leaf was removed.
///
/// # Errors
/// Tree, engine and record errors.
pub fn remove_leaf(
    st: &mut Staged<'_>,
    tf: &mut TenantForest,
    id: u64,
    payload: Payload,
    times: &[TimeRange],
) -> Result<bool, MemoryError> {
    let Some(tree) = tf.tree(st, id)? else {
        return Ok(false);
    };
    let Some(key) = find_leaf(st, tree, payload, times)? else {
        return Ok(false);
    };
    let removed = tree.delete(st, &key)?.is_some();
    if tree.is_empty() {
        delete_tree(st, tf, id)?;
    } else if removed {
        st.put(Table::DirtyMarks, &id.to_be_bytes(), Vec::new());
        tf.dirty.insert(id);
    }
    Ok(removed)
}

/// Deletes tree `id`: its pages, descriptor, dirty mark, node embeddings and the router
/// state of its entity or scene.
///
/// # Errors
/// Engine and record errors.
pub fn delete_tree(st: &mut Staged<'_>, tf: &mut TenantForest, id: u64) -> Result<(), MemoryError> {
    tf.trees.remove(&id);
    tf.dirty.remove(&id);
    for table in [Table::NodePages, Table::Embeddings] {
        for (k, _) in st.scan_prefix(table, &id.to_be_bytes())? {
            st.delete(table, &k);
        }
    }
    st.delete(
        Table::NodePages,
        &crate::node_store::page_key(memforest_tree::PageKey {
            tree: memforest_tree::TreeId(id),
            node: NodeId::META,
        }),
    );
    st.delete(Table::DirtyMarks, &id.to_be_bytes());
    if let Some(b) = st.get(Table::Trees, &id.to_be_bytes())? {
        let rec: TreeRecord = record::decode(&b, "tree")?;
        st.delete(Table::Trees, &id.to_be_bytes());
        if rec.kind == TreeKind::Entity.as_u8() {
            tf.active_entities.remove(&rec.label);
            st.delete(
                Table::RouterState,
                &record::prefixed(ENTITY_PREFIX, rec.label.as_bytes()),
            );
        } else if rec.kind == TreeKind::Scene.as_u8() {
            for (k, v) in st.scan_prefix(Table::RouterState, &[SCENE_PREFIX])? {
                let s: SceneState = record::decode(&v, "scene state")?;
                if s.label == rec.label {
                    st.delete(Table::RouterState, &k);
                }
            }
            tf.scenes = None;
            tf.scene_index.clear();
        }
    }
    Ok(())
}

/// Removes `facts` from the pending lists of the entity states under `keys` (normalized
/// entity keys; absent ones are skipped) and, when given, `session` from their session
/// lists; deletes inactive states left with no fact.
///
/// # Errors
/// Engine and record errors.
pub fn scrub_entities(
    st: &mut Staged<'_>,
    keys: &BTreeSet<String>,
    facts: &[u64],
    session: Option<&str>,
) -> Result<(), MemoryError> {
    for key in keys {
        let k = record::prefixed(ENTITY_PREFIX, key.as_bytes());
        let Some(v) = st.get(Table::RouterState, &k)? else {
            continue;
        };
        let mut s: EntityState = record::decode(&v, "entity state")?;
        let before = s.clone();
        s.facts.retain(|f| !facts.contains(f));
        if let Some(sess) = session {
            s.sessions.retain(|x| x != sess);
        }
        if !s.active && s.facts.is_empty() {
            st.delete(Table::RouterState, &k);
        } else if s != before {
            st.put(Table::RouterState, &k, record::encode(&s)?);
        }
    }
    Ok(())
}

/// Takes one fact with `topics` out of the scene state of tree `tree` (if it is a scene).
///
/// # Errors
/// Engine and record errors.
pub fn scrub_scene(
    kv: &Kv,
    st: &mut Staged<'_>,
    tf: &mut TenantForest,
    tree: u64,
    topics: &[String],
) -> Result<(), MemoryError> {
    let tenant = st.tenant().clone();
    for (k, _) in kv.scan_prefix(&tenant, Table::RouterState, &[SCENE_PREFIX])? {
        let Some(v) = st.get(Table::RouterState, &k)? else {
            continue;
        };
        let mut s: SceneState = record::decode(&v, "scene state")?;
        if record::tree_id(TreeKind::Scene, &s.label) != tree {
            continue;
        }
        s.facts = s.facts.saturating_sub(1);
        for t in topics {
            if let Some(c) = s.counts.iter_mut().find(|(k, _)| k == t) {
                c.1 = c.1.saturating_sub(1);
            }
        }
        s.counts.retain(|c| c.1 > 0);
        st.put(Table::RouterState, &k, record::encode(&s)?);
        tf.scenes = None;
        tf.scene_index.clear();
    }
    Ok(())
}
