//! Nodes of a MemTree, in memory.
//!
//! Level numbering: a *leaf* (level 0) is one [`LeafEntry`] — exactly one payload with its
//! time range and text. Leaves are packed, up to `k` at a time, into a level-1 node, the bottom
//! of the B+ tree; nodes at level 2 and above hold up to `k` [`ChildRef`]s. Every node (level
//! 1 and up) is an *internal node* in the MemForest sense: it carries a summary of its children,
//! the input hash that summary was made from, and a dirty flag. Each node is stored as one page
//! (see [`crate::page`]).

use std::fmt;

use crate::key::{LeafKey, TimeRange};

/// Identifies a node page within its tree. `0` is reserved for the tree's meta page; node ids
/// are allocated from the meta page's counter and never reused while the tree exists (a tree
/// deleted and created again under the same [`TreeId`] starts over at 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u64);

impl NodeId {
    /// The meta page's id.
    pub const META: Self = Self(0);
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Identifies one tree within a [`crate::store::NodeStore`] shared by many trees; chosen by the
/// engine when it creates the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TreeId(pub u64);

impl fmt::Display for TreeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A leaf (level 0): one payload, its key, and its text.
///
/// The text is the leaf's summary (the fact text or the cell text, passed through: a leaf never
/// needs an LLM). The tree stores it as supplied at insert, so a parent's summary input can be
/// built from the node pages alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafEntry {
    /// Order key: time range and payload.
    pub key: LeafKey,
    /// The payload's text (UTF-8).
    pub text: String,
}

/// A parent's record of one child node.
///
/// `first`, `time` and `items` describe the child's subtree; `crc` is the masked CRC-32 stored
/// in the child page's trailer, checked whenever the child is read through this reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildRef {
    /// The child's node id.
    pub id: NodeId,
    /// Smallest leaf key in the child's subtree: the separator used to route descents.
    pub first: LeafKey,
    /// Smallest start and largest end among the subtree's leaves.
    pub time: TimeRange,
    /// Number of leaves in the subtree.
    pub items: u64,
    /// Masked CRC-32 of the child page (its trailer value).
    pub crc: u32,
}

/// A node's summary text and the hash of the [`crate::refresh::SummaryInput`] it was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The input hash ([`crate::hash`]) the summary was generated from.
    pub input_hash: u64,
    /// The summary text.
    pub text: String,
}

/// A node's entries: leaves for a level-1 node, child references above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeBody {
    /// Level 1: leaves in key order.
    Leaves(Vec<LeafEntry>),
    /// Level >= 2: children in key order.
    Children(Vec<ChildRef>),
}

/// One node (level >= 1) of a MemTree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// 1 for the bottom nodes (holding leaves), parent levels count up from there.
    pub level: u8,
    /// The tree's structure version ([`crate::meta::TreeMeta::version`]) when this node's
    /// entries last changed.
    pub version: u64,
    /// True while the summary does not reflect the current children (the node is in its tree's
    /// dirty set).
    pub dirty: bool,
    /// Last accepted summary, if any.
    pub summary: Option<Summary>,
    /// The entries.
    pub body: NodeBody,
}

impl Node {
    /// A fresh, dirty node with no summary.
    #[must_use]
    pub fn new(level: u8, version: u64, body: NodeBody) -> Self {
        Self {
            level,
            version,
            dirty: true,
            summary: None,
            body,
        }
    }

    /// Number of entries (leaves or children).
    #[must_use]
    pub fn len(&self) -> usize {
        match &self.body {
            NodeBody::Leaves(v) => v.len(),
            NodeBody::Children(v) => v.len(),
        }
    }

    /// True when the node has no entries (only ever transient, inside an operation).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Smallest leaf key in the subtree; `None` for an empty node.
    #[must_use]
    pub fn first_key(&self) -> Option<LeafKey> {
        match &self.body {
            NodeBody::Leaves(v) => v.first().map(|e| e.key),
            NodeBody::Children(v) => v.first().map(|c| c.first),
        }
    }

    /// Smallest start and largest end over the subtree; `None` for an empty node.
    #[must_use]
    pub fn time_range(&self) -> Option<TimeRange> {
        match &self.body {
            NodeBody::Leaves(v) => v.iter().map(|e| e.key.time).reduce(TimeRange::union),
            NodeBody::Children(v) => v.iter().map(|c| c.time).reduce(TimeRange::union),
        }
    }

    /// Number of leaves in the subtree.
    #[must_use]
    pub fn items(&self) -> u64 {
        match &self.body {
            NodeBody::Leaves(v) => v.len() as u64,
            NodeBody::Children(v) => v.iter().map(|c| c.items).sum(),
        }
    }

    /// Index of the child whose subtree holds (or would hold) `key`: the last child whose
    /// separator is `<= key`, or the first child when `key` precedes them all. `None` for a
    /// level-1 node or an empty one.
    #[must_use]
    pub fn route(&self, key: &LeafKey) -> Option<usize> {
        match &self.body {
            NodeBody::Leaves(_) => None,
            NodeBody::Children(v) if v.is_empty() => None,
            NodeBody::Children(v) => Some(v.partition_point(|c| c.first <= *key).saturating_sub(1)),
        }
    }

    /// The child references (empty for a level-1 node).
    #[must_use]
    pub fn children(&self) -> &[ChildRef] {
        match &self.body {
            NodeBody::Leaves(_) => &[],
            NodeBody::Children(v) => v,
        }
    }

    /// The leaves (empty for a node above level 1).
    #[must_use]
    pub fn leaves(&self) -> &[LeafEntry] {
        match &self.body {
            NodeBody::Leaves(v) => v,
            NodeBody::Children(_) => &[],
        }
    }

    /// Moves the entries from `at` on into a new node of the same level (fresh and dirty).
    #[must_use]
    pub fn split_off(&mut self, at: usize, version: u64) -> Node {
        let body = match &mut self.body {
            NodeBody::Leaves(v) => NodeBody::Leaves(v.split_off(at.min(v.len()))),
            NodeBody::Children(v) => NodeBody::Children(v.split_off(at.min(v.len()))),
        };
        Node::new(self.level, version, body)
    }

    /// Appends all of `right`'s entries; returns false (and changes nothing) when the bodies
    /// are of different kinds.
    #[must_use = "false means nothing moved"]
    pub fn absorb(&mut self, right: Node) -> bool {
        match (&mut self.body, right.body) {
            (NodeBody::Leaves(a), NodeBody::Leaves(mut b)) => a.append(&mut b),
            (NodeBody::Children(a), NodeBody::Children(mut b)) => a.append(&mut b),
            _ => return false,
        }
        true
    }

    /// Moves this node's last entry to the front of `right`; false when nothing moved.
    #[must_use = "false means nothing moved"]
    pub fn give_last(&mut self, right: &mut Node) -> bool {
        match (&mut self.body, &mut right.body) {
            (NodeBody::Leaves(a), NodeBody::Leaves(b)) => a.pop().map(|e| b.insert(0, e)),
            (NodeBody::Children(a), NodeBody::Children(b)) => a.pop().map(|e| b.insert(0, e)),
            _ => None,
        }
        .is_some()
    }

    /// Moves `right`'s first entry to the end of this node; false when nothing moved.
    #[must_use = "false means nothing moved"]
    pub fn take_first(&mut self, right: &mut Node) -> bool {
        match (&mut self.body, &mut right.body) {
            (NodeBody::Leaves(a), NodeBody::Leaves(b)) if !b.is_empty() => a.push(b.remove(0)),
            (NodeBody::Children(a), NodeBody::Children(b)) if !b.is_empty() => {
                a.push(b.remove(0));
            }
            _ => return false,
        }
        true
    }
}
