//! Delete: remove one leaf, rebalance with B-tree borrow/merge, collapse the root.
//!
//! Bounds: a node off the right edge keeps between `ceil(k/2)` and `k` entries; a node on the
//! right edge (the last child at every level, where appends land) may hold as few as one. An
//! underfull node borrows one entry from a sibling that can spare one, or else merges with
//! it; a right-edge node that becomes empty is removed. A root above level 1 with a single
//! child is replaced by that child; a tree whose last leaf goes is empty (no root).

use crate::error::TreeError;
use crate::key::LeafKey;
use crate::meta::RootRef;
use crate::node::{LeafEntry, Node, NodeBody, NodeId};
use crate::store::NodeStore;
use crate::tree::{MemTree, Step};

impl MemTree {
    /// Removes the leaf with `key` and returns it, or `None` (and changes nothing) when the key
    /// is not in the tree. Every node whose entries change is marked dirty, as is the path to
    /// the root.
    ///
    /// # Errors
    /// Corruption errors from pages read on the way; store errors (the tree is then unchanged).
    pub fn delete<S: NodeStore + ?Sized>(
        &mut self,
        store: &mut S,
        key: &LeafKey,
    ) -> Result<Option<LeafEntry>, TreeError> {
        let mut path = self.descend(store, key, 1)?;
        let Some(mut step) = path.pop() else {
            return Ok(None);
        };
        let NodeBody::Leaves(leaves) = &mut step.node.body else {
            return Err(self.corrupt(step.id, "descent ended above level 1"));
        };
        let Ok(pos) = leaves.binary_search_by(|e| e.key.cmp(key)) else {
            return Ok(None);
        };
        let removed = leaves.remove(pos);

        let mut meta = self.meta.clone();
        meta.version = meta.version.saturating_add(1);
        meta.items = meta
            .items
            .checked_sub(1)
            .ok_or_else(|| self.corrupt(NodeId::META, "item count below the number of leaves"))?;
        let version = meta.version;
        let k = meta.branching.max();
        let min = meta.branching.min();
        let mut written: Vec<(NodeId, Node)> = Vec::with_capacity(2 * path.len() + 2);
        let mut freed: Vec<(NodeId, u8)> = Vec::new();

        while let Some(mut parent) = path.pop() {
            let NodeBody::Children(children) = &mut parent.node.body else {
                return Err(self.corrupt(parent.id, "level-1 node above another node"));
            };
            if step.node.is_empty() {
                freed.push((step.id, step.node.level));
                if parent.idx < children.len() {
                    children.remove(parent.idx);
                }
            } else if !step.right_edge && step.node.len() < min {
                let bounds = Bounds { k, min, version };
                self.rebalance(store, step, &mut parent, bounds, &mut written, &mut freed)?;
            } else {
                touch(&mut step.node, version);
                written.push((step.id, step.node));
            }
            step = parent;
        }

        // `step` is now the root.
        if step.node.is_empty() {
            freed.push((step.id, step.node.level));
            self.commit(store, meta, written, &freed, None)?;
            return Ok(Some(removed));
        }
        touch(&mut step.node, version);
        let mut root = RootRef {
            id: step.id,
            level: step.node.level,
            crc: 0,
        };
        let mut root_node = step.node;
        while root_node.level > 1 && root_node.len() == 1 {
            let Some(only) = root_node.children().first().cloned() else {
                break;
            };
            freed.push((root.id, root_node.level));
            root = RootRef {
                id: only.id,
                level: root_node.level - 1,
                crc: only.crc,
            };
            root_node = match written.iter().position(|(id, _)| *id == only.id) {
                Some(i) => written.swap_remove(i).1,
                None => self.load_child(store, &only, root_node.level)?,
            };
        }
        if root_node.dirty {
            written.push((root.id, root_node));
        }
        self.commit(store, meta, written, &freed, Some(root))?;
        Ok(Some(removed))
    }

    /// Fixes an underfull node off the right edge (`step`, child `parent.idx` of `parent`) by
    /// borrowing one entry from a sibling or merging with it.
    fn rebalance<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        step: Step,
        parent: &mut Step,
        Bounds { k, min, version }: Bounds,
        written: &mut Vec<(NodeId, Node)>,
        freed: &mut Vec<(NodeId, u8)>,
    ) -> Result<(), TreeError> {
        let i = parent.idx;
        let level = step.node.level;
        let corrupt = |what| self.corrupt(parent.id, what);
        let NodeBody::Children(children) = &mut parent.node.body else {
            return Err(corrupt("level-1 node above another node"));
        };
        let mut node = step.node;
        touch(&mut node, version);
        if i > 0 {
            let left_ref = children
                .get(i - 1)
                .cloned()
                .ok_or_else(|| corrupt("missing left sibling"))?;
            let mut left = self.load_child(store, &left_ref, level + 1)?;
            touch(&mut left, version);
            let moved = if left.len() > min {
                let moved = left.give_last(&mut node);
                written.push((step.id, node));
                moved
            } else {
                freed.push((step.id, level));
                children.remove(i);
                left.absorb(node)
            };
            if !moved {
                return Err(corrupt("siblings of different kinds"));
            }
            written.push((left_ref.id, left));
        } else {
            let right_ref = children
                .get(1)
                .cloned()
                .ok_or_else(|| corrupt("missing right sibling"))?;
            let right_edge = parent.right_edge && children.len() == 2;
            let mut right = self.load_child(store, &right_ref, level + 1)?;
            touch(&mut right, version);
            let merge = if right_edge {
                node.len() + right.len() <= k
            } else {
                right.len() <= min
            };
            let moved = if merge {
                freed.push((right_ref.id, level));
                children.remove(1);
                node.absorb(right)
            } else {
                let moved = node.take_first(&mut right);
                written.push((right_ref.id, right));
                moved
            };
            if !moved {
                return Err(corrupt("siblings of different kinds"));
            }
            written.push((step.id, node));
        }
        Ok(())
    }
}

/// What a rebalance needs to know: the branching factor `k`, the minimum fill off the right
/// edge, and the structure version of the current operation.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    k: usize,
    min: usize,
    version: u64,
}

/// Marks a node changed by the current operation: dirty, stamped with its version.
fn touch(node: &mut Node, version: u64) {
    node.dirty = true;
    node.version = version;
}
