//! The tree's meta page: its persistent header.

use crate::config::Branching;
use crate::kind::TreeKind;
use crate::node::NodeId;

/// Where the root is, and the CRC its page must carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootRef {
    /// The root node's id.
    pub id: NodeId,
    /// The root's level (1 when the root holds the leaves); the tree's height in pages.
    pub level: u8,
    /// Masked CRC-32 of the root page (its trailer value).
    pub crc: u32,
}

/// Persistent state of one tree, stored as page [`NodeId::META`] and rewritten in the same
/// batch as every change to the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeMeta {
    /// Which scope the tree indexes.
    pub kind: TreeKind,
    /// The scope's label (a session id, an entity key such as `user`, a scene id); UTF-8.
    pub label: String,
    /// The branching factor `k`, fixed when the tree was created.
    pub branching: Branching,
    /// The root, or `None` for an empty tree.
    pub root: Option<RootRef>,
    /// Number of leaves.
    pub items: u64,
    /// Next node id to allocate (ids start at 1 and are never reused while the tree exists).
    pub next_node: u64,
    /// Structure version: incremented by every insert and delete.
    pub version: u64,
    /// Number of dirty nodes; cross-checked when the dirty sets are rebuilt on open.
    pub dirty_nodes: u64,
}

impl TreeMeta {
    /// Meta of a new, empty tree.
    #[must_use]
    pub fn new(kind: TreeKind, label: String, branching: Branching) -> Self {
        Self {
            kind,
            label,
            branching,
            root: None,
            items: 0,
            next_node: 1,
            version: 0,
            dirty_nodes: 0,
        }
    }

    /// Allocates a fresh node id from the counter; `None` once the counter is exhausted
    /// (only a corrupt meta page gets there).
    pub fn alloc(&mut self) -> Option<NodeId> {
        let id = self.next_node;
        self.next_node = id.checked_add(1)?;
        Some(NodeId(id))
    }
}
