//! Per-level dirty sets: the nodes whose summaries no longer match their children.
//!
//! Persistence: a node's dirty flag lives in its own page, written in the same batch as the
//! change that dirtied it, and the meta page records how many nodes are dirty. These sets are
//! the in-memory index over those flags, rebuilt on open by descending from the root through
//! dirty nodes only. That works because dirtiness is closed upwards: every structural change
//! dirties the whole path to the root, and a summary is only accepted once its children are
//! clean, so every ancestor of a dirty node is dirty.

use std::collections::BTreeSet;

use crate::node::NodeId;

/// Dirty node ids by level (index 0 holds level 1). Marks coalesce: a node is in at most one
/// set, once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirtySets {
    levels: Vec<BTreeSet<NodeId>>,
}

impl DirtySets {
    /// Marks `node` (at `level` >= 1) dirty; true if it was not already.
    pub fn mark(&mut self, level: u8, node: NodeId) -> bool {
        let index = usize::from(level.saturating_sub(1));
        if self.levels.len() <= index {
            self.levels.resize_with(index + 1, BTreeSet::new);
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
        while self.levels.last().is_some_and(BTreeSet::is_empty) {
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
    pub fn level(&self, level: u8) -> impl Iterator<Item = NodeId> + '_ {
        let index = usize::from(level.saturating_sub(1));
        self.levels.get(index).into_iter().flatten().copied()
    }

    /// Highest level with a dirty node (0 when nothing is dirty).
    #[must_use]
    pub fn top_level(&self) -> u8 {
        u8::try_from(self.levels.len()).unwrap_or(u8::MAX)
    }

    /// Number of dirty nodes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.levels.iter().map(BTreeSet::len).sum()
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
        assert_eq!(d.level(1).collect::<Vec<_>>(), vec![NodeId(3)]);
        assert!(d.clear(1, NodeId(3)));
        assert!(d.is_empty());
    }
}
