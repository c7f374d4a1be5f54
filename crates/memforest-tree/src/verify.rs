//! A full-tree consistency check, for tests, fuzzing and an engine `check` tool.

use crate::error::TreeError;
use crate::key::{LeafKey, TimeRange};
use crate::node::{Node, NodeId};
use crate::refresh::input_hash;
use crate::store::NodeStore;
use crate::tree::{describe, MemTree};

/// Shape of a verified tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeShape {
    /// Height in node levels (0 for an empty tree).
    pub height: u8,
    /// Node count per level (index 0 is level 1).
    pub nodes: Vec<u64>,
    /// Entry count (leaves or children) per level (index 0 is level 1).
    pub entries: Vec<u64>,
    /// Number of leaves.
    pub items: u64,
}

impl TreeShape {
    /// Average fill of the nodes, in `0.0..=1.0`: entries over `nodes * k`.
    #[must_use]
    pub fn fill(&self, k: u16) -> f64 {
        let nodes: u64 = self.nodes.iter().sum();
        let entries: u64 = self.entries.iter().sum();
        if nodes == 0 {
            return 0.0;
        }
        entries as f64 / (nodes as f64 * f64::from(k))
    }
}

/// What a subtree reports to its parent during verification.
struct Walked {
    dirty: bool,
    /// `(time range, summary text)` when the node is clean.
    summary: Option<(TimeRange, String)>,
}

struct Walk<'a> {
    last_key: Option<LeafKey>,
    shape: TreeShape,
    dirty_seen: usize,
    k: usize,
    min: usize,
    tree: &'a MemTree,
}

impl MemTree {
    /// Reads every page and checks every invariant: all level-1 nodes at the same depth and
    /// levels counting down by one; entry counts within bounds (`ceil(k/2)..=k` off the right
    /// edge, `1..=k` on it, at least 2 children for a root above level 1); leaves in strictly
    /// increasing key order; each child reference's separator, time range, item count and CRC
    /// equal to the child's; dirty flags equal to the dirty sets and closed upwards; every clean
    /// node's summary made from its current input; counts equal to the meta page's.
    ///
    /// # Errors
    /// [`TreeError::Invariant`] naming the node and the broken rule; corruption and store
    /// errors.
    pub fn verify<S: NodeStore + ?Sized>(&self, store: &S) -> Result<TreeShape, TreeError> {
        let mut walk = Walk {
            last_key: None,
            shape: TreeShape::default(),
            dirty_seen: 0,
            k: self.meta.branching.max(),
            min: self.meta.branching.min(),
            tree: self,
        };
        if let Some(root) = self.meta.root {
            let node = self.load(store, root.id, root.crc, root.level)?;
            walk.shape.height = root.level;
            walk.shape.nodes = vec![0; usize::from(root.level)];
            walk.shape.entries = vec![0; usize::from(root.level)];
            walk.node(store, root.id, &node, true, true)?;
        }
        let meta_node = NodeId::META;
        if walk.shape.items != self.meta.items {
            return Err(self.invariant(meta_node, "meta item count differs from the leaves"));
        }
        if walk.dirty_seen != self.dirty.len() || self.dirty.len() as u64 != self.meta.dirty_nodes {
            return Err(self.invariant(meta_node, "dirty sets, dirty pages and meta count differ"));
        }
        Ok(walk.shape)
    }

    fn invariant(&self, node: NodeId, what: &str) -> TreeError {
        TreeError::Invariant {
            tree: self.id,
            node,
            what: what.to_owned(),
        }
    }
}

impl Walk<'_> {
    fn node<S: NodeStore + ?Sized>(
        &mut self,
        store: &S,
        id: NodeId,
        node: &Node,
        root: bool,
        right_edge: bool,
    ) -> Result<Walked, TreeError> {
        let tree = self.tree;
        let fail = |what: &str| Err(tree.invariant(id, what));
        let len = node.len();
        let low = match (root, right_edge, node.level) {
            (true, _, 1) | (false, true, _) => 1,
            (true, _, _) => 2,
            (false, false, _) => self.min,
        };
        if len < low || len > self.k {
            return fail(&format!("{len} entries outside {low}..={}", self.k));
        }
        let index = usize::from(node.level) - 1;
        if let (Some(n), Some(e)) = (
            self.shape.nodes.get_mut(index),
            self.shape.entries.get_mut(index),
        ) {
            *n += 1;
            *e += len as u64;
        }
        if node.dirty != tree.dirty.contains(node.level, id) {
            return fail("dirty flag differs from the dirty sets");
        }
        if node.dirty {
            self.dirty_seen += 1;
        }
        let mut children: Vec<(TimeRange, String)> = Vec::with_capacity(len);
        for leaf in node.leaves() {
            if self.last_key.is_some_and(|last| last >= leaf.key) {
                return fail("leaves out of key order");
            }
            self.last_key = Some(leaf.key);
            self.shape.items += 1;
            children.push((leaf.key.time, leaf.text.clone()));
        }
        let last = len.saturating_sub(1);
        for (i, child) in node.children().iter().enumerate() {
            let child_node = tree.load_child(store, child, node.level)?;
            if describe(child.id, &child_node, child.crc).as_ref() != Some(child) {
                return fail("child reference differs from the child");
            }
            let walked = self.node(store, child.id, &child_node, false, right_edge && i == last)?;
            if walked.dirty && !node.dirty {
                return fail("clean node above a dirty child");
            }
            children.extend(walked.summary);
        }
        let Some(time) = node.time_range() else {
            return fail("empty node");
        };
        if node.dirty {
            return Ok(Walked {
                dirty: true,
                summary: None,
            });
        }
        let current = input_hash(
            tree.meta.kind,
            &tree.meta.label,
            node.level,
            time,
            children.iter().map(|(t, s)| (*t, s.as_str())),
        );
        match &node.summary {
            Some(s) if s.input_hash == current => Ok(Walked {
                dirty: false,
                summary: Some((time, s.text.clone())),
            }),
            _ => fail("clean node whose summary is missing or stale"),
        }
    }
}
