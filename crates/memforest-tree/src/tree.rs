//! [`MemTree`]: one time-ordered B+ tree, its meta page, and its dirty sets.
//!
//! The tree object holds only the meta page and the dirty index; nodes live in a
//! [`NodeStore`] passed to every call, so many trees can share one store. Each mutating call
//! reads the pages on its path, changes them in memory, and writes every changed page plus the
//! meta page as one [`PageBatch`] (see [`MemTree::commit`]); the in-memory state only changes
//! once the store accepted the batch.

use std::collections::HashMap;

use crate::config::TreeConfig;
use crate::dirty::DirtySets;
use crate::error::TreeError;
use crate::key::LeafKey;
use crate::kind::TreeKind;
use crate::meta::{RootRef, TreeMeta};
use crate::node::{ChildRef, Node, NodeBody, NodeId, TreeId};
use crate::page::{self, Page, MAX_TEXT_BYTES};
use crate::store::{NodeStore, PageBatch, PageKey};

/// A MemTree handle: the tree's meta page and its per-level dirty sets.
#[derive(Debug, Clone)]
pub struct MemTree {
    pub(crate) id: TreeId,
    pub(crate) meta: TreeMeta,
    pub(crate) dirty: DirtySets,
}

/// One node on a root-to-node path, as read during a descent.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub id: NodeId,
    pub node: Node,
    /// The page CRC the descent checked the node against (its parent's or the meta page's
    /// record of it).
    pub crc: u32,
    /// Index of the child the descent took (unused at the last step).
    pub idx: usize,
    /// True when every index taken above this node was the last one.
    pub right_edge: bool,
}

impl MemTree {
    /// Creates an empty tree with the branching factor `config` gives `kind`, and writes its
    /// meta page.
    ///
    /// # Errors
    /// [`TreeError::TreeExists`] when `tree` already has a meta page; [`TreeError::TextTooLong`]
    /// for a label over 1 MiB; store errors.
    pub fn create<S: NodeStore + ?Sized>(
        store: &mut S,
        tree: TreeId,
        kind: TreeKind,
        label: &str,
        config: &TreeConfig,
    ) -> Result<Self, TreeError> {
        check_text(label)?;
        if store.get(meta_key(tree))?.is_some() {
            return Err(TreeError::TreeExists { tree });
        }
        let meta = TreeMeta::new(kind, label.to_owned(), config.branching(kind));
        let mut batch = PageBatch::default();
        batch.put(meta_key(tree), page::encode_meta(&meta));
        store.apply(batch)?;
        Ok(Self {
            id: tree,
            meta,
            dirty: DirtySets::default(),
        })
    }

    /// Opens a stored tree: reads its meta page and rebuilds the dirty sets by descending from
    /// the root through dirty nodes (one read per dirty node and per child of one).
    ///
    /// # Errors
    /// [`TreeError::MissingPage`] for a tree with no meta page; corruption errors for bad pages
    /// or a dirty count that disagrees with the meta page; store errors.
    pub fn open<S: NodeStore + ?Sized>(store: &S, tree: TreeId) -> Result<Self, TreeError> {
        let bytes = store.get(meta_key(tree))?.ok_or(TreeError::MissingPage {
            tree,
            node: NodeId::META,
        })?;
        let meta = match page::decode(&bytes) {
            Ok(Page::Meta(meta)) => meta,
            Ok(Page::Node(_)) => {
                return Err(TreeError::Corrupt {
                    tree,
                    node: NodeId::META,
                    what: "node page where the meta page belongs",
                })
            }
            Err(source) => {
                return Err(TreeError::Page {
                    tree,
                    node: NodeId::META,
                    source,
                })
            }
        };
        let mut this = Self {
            id: tree,
            meta,
            dirty: DirtySets::default(),
        };
        if let Some(root) = this.meta.root {
            let node = this.load(store, root.id, root.crc, root.level)?;
            let mut stack = vec![(root.id, node)];
            while let Some((id, node)) = stack.pop() {
                if !node.dirty {
                    continue;
                }
                this.dirty.mark(node.level, id);
                for child in node.children() {
                    let child_node = this.load(store, child.id, child.crc, node.level - 1)?;
                    stack.push((child.id, child_node));
                }
            }
        }
        if this.dirty.len() as u64 != this.meta.dirty_nodes {
            return Err(TreeError::Corrupt {
                tree,
                node: NodeId::META,
                what: "dirty node count disagrees with the dirty pages reachable from the root",
            });
        }
        Ok(this)
    }

    /// The tree's id within its store.
    #[must_use]
    pub fn id(&self) -> TreeId {
        self.id
    }

    /// The tree's persistent header.
    #[must_use]
    pub fn meta(&self) -> &TreeMeta {
        &self.meta
    }

    /// Number of leaves.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.meta.items
    }

    /// True when the tree has no leaves.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.meta.root.is_none()
    }

    /// Height in node levels (0 for an empty tree, 1 when the root holds the leaves).
    #[must_use]
    pub fn height(&self) -> u8 {
        self.meta.root.map_or(0, |r| r.level)
    }

    /// The per-level dirty sets.
    #[must_use]
    pub fn dirty(&self) -> &DirtySets {
        &self.dirty
    }

    /// Reads one node of this tree by id. Only the page's own CRC is checked (no parent is
    /// consulted).
    ///
    /// # Errors
    /// [`TreeError::UnknownNode`] when no such node page exists; [`TreeError::Page`] for a
    /// page that fails to decode; store errors.
    pub fn node<S: NodeStore + ?Sized>(&self, store: &S, id: NodeId) -> Result<Node, TreeError> {
        Ok(self.node_and_crc(store, id)?.0)
    }

    /// [`MemTree::node`] and the page's CRC (its trailer value).
    pub(crate) fn node_and_crc<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        id: NodeId,
    ) -> Result<(Node, u32), TreeError> {
        let bytes = store.get(self.key(id))?.ok_or(TreeError::UnknownNode {
            tree: self.id,
            node: id,
        })?;
        match self.decode(id, &bytes)? {
            Page::Node(node) if id != NodeId::META => {
                Ok((node, page::page_crc(&bytes).unwrap_or_default()))
            }
            _ => Err(TreeError::UnknownNode {
                tree: self.id,
                node: id,
            }),
        }
    }

    /// The node ids from the root down to the level-1 node whose range holds `key` (empty for
    /// an empty tree).
    ///
    /// # Errors
    /// Corruption and store errors met on the way down.
    pub fn path<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        key: &LeafKey,
    ) -> Result<Vec<NodeId>, TreeError> {
        Ok(self
            .descend(store, key, 1)?
            .into_iter()
            .map(|s| s.id)
            .collect())
    }

    pub(crate) fn key(&self, node: NodeId) -> PageKey {
        PageKey {
            tree: self.id,
            node,
        }
    }

    fn decode(&self, node: NodeId, bytes: &[u8]) -> Result<Page, TreeError> {
        page::decode(bytes).map_err(|source| TreeError::Page {
            tree: self.id,
            node,
            source,
        })
    }

    /// Reads a node through a reference that recorded its CRC and level.
    pub(crate) fn load<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        id: NodeId,
        crc: u32,
        level: u8,
    ) -> Result<Node, TreeError> {
        let tree = self.id;
        let bytes = store
            .get(self.key(id))?
            .ok_or(TreeError::MissingPage { tree, node: id })?;
        let found = page::page_crc(&bytes).unwrap_or_default();
        let node = match self.decode(id, &bytes)? {
            Page::Node(node) => node,
            Page::Meta(_) => {
                return Err(TreeError::Corrupt {
                    tree,
                    node: id,
                    what: "meta page where a node page belongs",
                })
            }
        };
        if found != crc {
            return Err(TreeError::ChecksumMismatch {
                tree,
                node: id,
                expected: crc,
                found,
            });
        }
        if node.level != level {
            return Err(TreeError::Corrupt {
                tree,
                node: id,
                what: "node level is not its parent's level minus one",
            });
        }
        Ok(node)
    }

    /// Reads the child a reference points to, one level below `parent_level`.
    pub(crate) fn load_child<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        child: &ChildRef,
        parent_level: u8,
    ) -> Result<Node, TreeError> {
        self.load(store, child.id, child.crc, parent_level.saturating_sub(1))
    }

    /// Reads the path from the root towards `key`, down to the node at `stop_level` (or level
    /// 1 if the tree is lower). Empty for an empty tree.
    pub(crate) fn descend<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        key: &LeafKey,
        stop_level: u8,
    ) -> Result<Vec<Step>, TreeError> {
        let Some(root) = self.meta.root else {
            return Ok(Vec::new());
        };
        let mut path = Vec::with_capacity(usize::from(root.level));
        let mut node = self.load(store, root.id, root.crc, root.level)?;
        let (mut id, mut crc) = (root.id, root.crc);
        let mut right_edge = true;
        loop {
            let idx = match node.route(key) {
                Some(idx) if node.level > stop_level => idx,
                _ => {
                    path.push(Step {
                        id,
                        node,
                        crc,
                        idx: 0,
                        right_edge,
                    });
                    return Ok(path);
                }
            };
            let Some(child) = node.children().get(idx).cloned() else {
                return Ok(path);
            };
            let child_node = self.load_child(store, &child, node.level)?;
            let child_edge = right_edge && idx + 1 == node.len();
            path.push(Step {
                id,
                node,
                crc,
                idx,
                right_edge,
            });
            (id, crc) = (child.id, child.crc);
            node = child_node;
            right_edge = child_edge;
        }
    }

    /// Allocates a node id from `meta`'s counter.
    pub(crate) fn alloc(&self, meta: &mut TreeMeta) -> Result<NodeId, TreeError> {
        meta.alloc()
            .ok_or_else(|| self.corrupt(NodeId::META, "node id counter exhausted"))
    }

    /// A corruption error for `node` of this tree.
    pub(crate) fn corrupt(&self, node: NodeId, what: &'static str) -> TreeError {
        TreeError::Corrupt {
            tree: self.id,
            node,
            what,
        }
    }

    /// Writes `written` (every changed node; each one's parent must be in the set too unless it
    /// is the root), removes `freed` (id and level), points the meta page at `root`, and applies it all as one
    /// batch. Nodes are encoded level by level from the bottom so that each parent's child
    /// references can be refreshed (separator, time range, item count, CRC) from the children
    /// just encoded. The dirty sets follow the written nodes' dirty flags.
    ///
    /// `meta` is the new meta (with `next_node` / `version` already advanced by the caller);
    /// on a store error the tree keeps its previous state.
    pub(crate) fn commit<S: NodeStore + ?Sized>(
        &mut self,
        store: &mut S,
        mut meta: TreeMeta,
        mut written: Vec<(NodeId, Node)>,
        freed: &[(NodeId, u8)],
        root: Option<RootRef>,
    ) -> Result<(), TreeError> {
        written.sort_by_key(|(_, node)| node.level);
        let mut refs: HashMap<NodeId, ChildRef> = HashMap::with_capacity(written.len());
        let mut batch = PageBatch::default();
        for (id, node) in &mut written {
            if let NodeBody::Children(children) = &mut node.body {
                for child in children.iter_mut() {
                    if let Some(fresh) = refs.get(&child.id) {
                        *child = fresh.clone();
                    }
                }
            }
            let bytes = page::encode_node(node);
            let crc = page::page_crc(&bytes).unwrap_or_default();
            if let Some(r) = describe(*id, node, crc) {
                refs.insert(*id, r);
            }
            batch.put(self.key(*id), bytes);
        }
        for &(id, _) in freed {
            batch.delete(self.key(id));
        }
        meta.root = root.map(|r| RootRef {
            crc: refs.get(&r.id).map_or(r.crc, |c| c.crc),
            ..r
        });
        // Dirty-set changes, applied only once the store accepted the batch.
        let changes: Vec<(u8, NodeId, bool)> = written
            .iter()
            .map(|(id, node)| (node.level, *id, node.dirty))
            .chain(freed.iter().map(|&(id, level)| (level, id, false)))
            .collect();
        let mut dirty_nodes = self.dirty.len() as u64;
        for &(level, id, dirty) in &changes {
            match (self.dirty.contains(level, id), dirty) {
                (false, true) => dirty_nodes += 1,
                (true, false) => dirty_nodes = dirty_nodes.saturating_sub(1),
                _ => {}
            }
        }
        meta.dirty_nodes = dirty_nodes;
        batch.put(self.key(NodeId::META), page::encode_meta(&meta));
        store.apply(batch)?;
        for (level, id, dirty) in changes {
            if dirty {
                self.dirty.mark(level, id);
            } else {
                self.dirty.clear(level, id);
            }
        }
        self.meta = meta;
        Ok(())
    }
}

/// The reference a parent keeps for `node`; `None` for an empty node.
pub(crate) fn describe(id: NodeId, node: &Node, crc: u32) -> Option<ChildRef> {
    Some(ChildRef {
        id,
        first: node.first_key()?,
        time: node.time_range()?,
        items: node.items(),
        crc,
    })
}

/// Rejects texts the page format cannot carry.
pub(crate) fn check_text(text: &str) -> Result<(), TreeError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(TreeError::TextTooLong { len: text.len() });
    }
    Ok(())
}

fn meta_key(tree: TreeId) -> PageKey {
    PageKey {
        tree,
        node: NodeId::META,
    }
}
