//! Reads: time-range queries and neighbours.

use crate::error::TreeError;
use crate::key::{LeafKey, TimeRange};
use crate::node::{LeafEntry, Node};
use crate::store::NodeStore;
use crate::tree::MemTree;

/// The leaves just before and just after a key, in key order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Neighbours {
    /// The greatest leaf with a key below the probe.
    pub prev: Option<LeafEntry>,
    /// The smallest leaf with a key above the probe.
    pub next: Option<LeafEntry>,
}

impl MemTree {
    /// Every leaf whose time range overlaps `range` (inclusive at both ends), in key order.
    ///
    /// Cost: subtrees whose recorded time range misses `range` are skipped, and the scan stops
    /// at the first child starting after `range.end`, so with leaf ranges short relative to
    /// the query this reads O(log N + results / k) pages. (A few very long leaf ranges widen
    /// their ancestors' ranges and make more subtrees worth a look.)
    ///
    /// # Errors
    /// Corruption and store errors from the pages read.
    pub fn range<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        range: TimeRange,
    ) -> Result<Vec<LeafEntry>, TreeError> {
        let mut out = Vec::new();
        if let Some(root) = self.meta.root {
            let node = self.load(store, root.id, root.crc, root.level)?;
            self.collect(store, &node, range, &mut out)?;
        }
        Ok(out)
    }

    fn collect<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        node: &Node,
        range: TimeRange,
        out: &mut Vec<LeafEntry>,
    ) -> Result<(), TreeError> {
        for leaf in node.leaves() {
            if leaf.key.time.start > range.end {
                break;
            }
            if leaf.key.time.overlaps(range) {
                out.push(leaf.clone());
            }
        }
        for child in node.children() {
            if child.time.start > range.end {
                break;
            }
            if child.time.overlaps(range) {
                let child_node = self.load_child(store, child, node.level)?;
                self.collect(store, &child_node, range, out)?;
            }
        }
        Ok(())
    }

    /// The leaves adjacent to `key` in key order (`key` itself need not be in the tree): one
    /// descent, plus one more down a sibling subtree when the neighbour lives there.
    ///
    /// # Errors
    /// Corruption and store errors from the pages read.
    pub fn neighbours<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        key: &LeafKey,
    ) -> Result<Neighbours, TreeError> {
        let mut path = self.descend(store, key, 1)?;
        let Some(bottom) = path.pop() else {
            return Ok(Neighbours::default());
        };
        let leaves = bottom.node.leaves();
        let below = leaves.partition_point(|e| e.key < *key);
        let above = leaves.partition_point(|e| e.key <= *key);
        let mut prev = below.checked_sub(1).and_then(|i| leaves.get(i)).cloned();
        let mut next = leaves.get(above).cloned();
        for step in path.iter().rev() {
            if prev.is_some() {
                break;
            }
            if let Some(i) = step.idx.checked_sub(1) {
                prev = self.edge_leaf(store, &step.node, i, Edge::Last)?;
            }
        }
        for step in path.iter().rev() {
            if next.is_some() {
                break;
            }
            if step.idx + 1 < step.node.len() {
                next = self.edge_leaf(store, &step.node, step.idx + 1, Edge::First)?;
            }
        }
        Ok(Neighbours { prev, next })
    }

    /// The first or last leaf under child `idx` of `parent`.
    fn edge_leaf<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        parent: &Node,
        idx: usize,
        edge: Edge,
    ) -> Result<Option<LeafEntry>, TreeError> {
        let Some(child) = parent.children().get(idx) else {
            return Ok(None);
        };
        let mut node = self.load_child(store, child, parent.level)?;
        loop {
            let pick = |len: usize| match edge {
                Edge::First => 0,
                Edge::Last => len.saturating_sub(1),
            };
            if node.level == 1 {
                return Ok(node.leaves().get(pick(node.len())).cloned());
            }
            let Some(child) = node.children().get(pick(node.len())).cloned() else {
                return Ok(None);
            };
            node = self.load_child(store, &child, node.level)?;
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Edge {
    First,
    Last,
}
