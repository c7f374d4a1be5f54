//! Insert: descend by separator keys, add the leaf, split upwards, dirty the path.
//!
//! Cost: the `h` pages of one root-to-bottom path are read and rewritten (plus one page per
//! split and the meta page), so O(log_k N) pages.
//!
//! Splits: a full node normally splits in half. On the right edge, when the new entry lands
//! after every existing one (time-ordered appends), the node splits so that the left part
//! stays full (`k` entries) and the new right sibling starts with just the new entry. An
//! append-only tree therefore keeps every node but the right edge full, instead of the
//! half-full nodes of halving splits.

use crate::error::TreeError;
use crate::key::LeafKey;
use crate::meta::RootRef;
use crate::node::{LeafEntry, Node, NodeBody, NodeId};
use crate::store::NodeStore;
use crate::tree::{check_text, describe, MemTree};

impl MemTree {
    /// Inserts a leaf: `key` (time range and payload) with its `text` (the fact or cell text,
    /// which is the leaf's summary). Late (out-of-order) keys go to their time position. Every
    /// node on the path, and every node a split creates, is marked dirty. Inserting a leaf
    /// the tree holds already, with the same text, changes nothing: a write retried after
    /// the records that point to the leaf were lost (a WAL salvage) completes instead of
    /// failing.
    ///
    /// # Errors
    /// [`TreeError::InvalidTimeRange`], [`TreeError::TextTooLong`],
    /// [`TreeError::DuplicateKey`] (the key is there with another text); corruption errors
    /// from the pages read on the way down; store errors (the tree is then unchanged).
    pub fn insert<S: NodeStore + ?Sized>(
        &mut self,
        store: &mut S,
        key: LeafKey,
        text: &str,
    ) -> Result<(), TreeError> {
        if key.time.start > key.time.end {
            return Err(TreeError::InvalidTimeRange {
                start: key.time.start,
                end: key.time.end,
            });
        }
        check_text(text)?;
        let leaf = LeafEntry {
            key,
            text: text.to_owned(),
        };
        let mut path = self.descend(store, &key, 1)?;
        let mut meta = self.meta.clone();
        meta.version = meta.version.saturating_add(1);
        meta.items = meta
            .items
            .checked_add(1)
            .ok_or_else(|| self.corrupt(NodeId::META, "item count overflows"))?;
        let version = meta.version;
        let k = meta.branching.max();

        let Some(mut step) = path.pop() else {
            let id = self.alloc(&mut meta)?;
            let node = Node::new(1, version, NodeBody::Leaves(vec![leaf]));
            let root = RootRef {
                id,
                level: 1,
                crc: 0,
            };
            return self.commit(store, meta, vec![(id, node)], &[], Some(root));
        };
        let NodeBody::Leaves(leaves) = &mut step.node.body else {
            return Err(self.corrupt(step.id, "descent ended above level 1"));
        };
        let pos = match leaves.binary_search_by(|e| e.key.cmp(&key)) {
            Ok(i) if leaves.get(i).is_some_and(|e| e.text == text) => return Ok(()),
            Ok(_) => return Err(TreeError::DuplicateKey { tree: self.id, key }),
            Err(pos) => pos,
        };
        let mut append = step.right_edge && pos == leaves.len();
        leaves.insert(pos, leaf);

        let mut written = Vec::with_capacity(path.len() + 2);
        loop {
            step.node.dirty = true;
            step.node.version = version;
            // References to both halves when this node splits; `commit` fills in their CRCs.
            let mut split = None;
            if step.node.len() > k {
                let at = if append { k } else { step.node.len() / 2 };
                let right_id = self.alloc(&mut meta)?;
                let right = step.node.split_off(at, version);
                split = describe(step.id, &step.node, 0).zip(describe(right_id, &right, 0));
                written.push((right_id, right));
            }
            let (id, level) = (step.id, step.node.level);
            written.push((step.id, step.node));
            let Some(mut parent) = path.pop() else {
                let root = match split {
                    None => RootRef { id, level, crc: 0 },
                    Some((left, right)) => {
                        let up = level
                            .checked_add(1)
                            .ok_or_else(|| self.corrupt(id, "tree deeper than 255 levels"))?;
                        let root_id = self.alloc(&mut meta)?;
                        let node = Node::new(up, version, NodeBody::Children(vec![left, right]));
                        written.push((root_id, node));
                        RootRef {
                            id: root_id,
                            level: up,
                            crc: 0,
                        }
                    }
                };
                return self.commit(store, meta, written, &[], Some(root));
            };
            append = false;
            if let (Some((_, right)), NodeBody::Children(children)) = (split, &mut parent.node.body)
            {
                children.insert(parent.idx + 1, right);
                append = parent.right_edge && parent.idx + 2 == children.len();
            }
            step = parent;
        }
    }
}
