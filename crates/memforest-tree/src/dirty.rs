//! Per-level dirty sets: the nodes whose summaries no longer match their children.
//!
//! Persistence: a node's dirty flag lives in its own page, written in the same batch as the
//! change that dirtied it, and the meta page records how many nodes are dirty. These sets are
//! the in-memory index over those flags, rebuilt on open by descending from the root through
//! dirty nodes only. That works because dirtiness is closed upwards: every structural change
//! dirties the whole path to the root, and a summary is only accepted once its children are
//! clean, so every ancestor of a dirty node is dirty.

use std::collections::HashSet;

use crate::idhash::IdBuildHasher;
use crate::node::NodeId;

type IdSet = HashSet<NodeId, IdBuildHasher>;

/// Dirty node ids by level (index 0 holds level 1). Marks coalesce: a node is in at most one
/// set, once. Hash sets, so a mark or a check costs O(1) whatever the number of dirty nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirtySets {
    levels: Vec<IdSet>,
}

impl DirtySets {
    /// Marks `node` (at `level` >= 1) dirty; true if it was not already.
    pub fn mark(&mut self, level: u8, node: NodeId) -> bool {
        let index = usize::from(level.saturating_sub(1));
        if self.levels.len() <= index {
            self.levels.resize_with(index + 1, IdSet::default);
        }
        self.levels
            .get_mut(index)
            .is_some_and(|set| set.insert(node))
    }

    /// Clears `node`'s mark; true if it was marked.
    pub fn clear(&mut self, level: u8, node: NodeId) -> bool {
        let index = usize::from(level.saturating_sub(1));
        let removed = self
            .levels
            .get_mut(index)
            .is_some_and(|set| set.remove(&node));
        while self.levels.last().is_some_and(IdSet::is_empty) {
            self.levels.pop();
        }
        removed
    }

    /// True if `node` at `level` is marked.
    #[must_use]
    pub fn contains(&self, level: u8, node: NodeId) -> bool {
        let index = usize::from(level.saturating_sub(1));
        self.levels
            .get(index)
            .is_some_and(|set| set.contains(&node))
    }

    /// Dirty nodes of one level, in id order.
    #[must_use]
    pub fn level(&self, level: u8) -> Vec<NodeId> {
        let index = usize::from(level.saturating_sub(1));
        let mut ids: Vec<NodeId> = self
            .levels
            .get(index)
            .into_iter()
            .flatten()
            .copied()
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Highest level with a dirty node (0 when nothing is dirty).
    #[must_use]
    pub fn top_level(&self) -> u8 {
        u8::try_from(self.levels.len()).unwrap_or(u8::MAX)
    }

    /// Number of dirty nodes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.levels.iter().map(IdSet::len).sum()
    }

    /// True when nothing is dirty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_coalesce_and_levels_shrink() {
        let mut d = DirtySets::default();
        assert!(d.mark(2, NodeId(7)));
        assert!(!d.mark(2, NodeId(7)));
        assert!(d.mark(1, NodeId(3)));
        assert_eq!(d.len(), 2);
        assert_eq!(d.top_level(), 2);
        assert!(d.clear(2, NodeId(7)));
        assert!(!d.clear(2, NodeId(7)));
        assert_eq!(d.top_level(), 1);
        assert_eq!(d.level(1), vec![NodeId(3)]);
        assert!(d.clear(1, NodeId(3)));
        assert!(d.is_empty());
    }
}
