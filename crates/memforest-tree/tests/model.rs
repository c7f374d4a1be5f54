#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test harness: a panic is a failed assertion"
)]

//! Model test: random interleavings of in-order and late inserts, deletes, range queries,
//! neighbour lookups, refresh passes, stale summaries and reopen, checked against a sorted
//! map after every operation with `MemTree::verify` (all invariants) plus path-dirtiness.

use std::collections::BTreeMap;

use memforest_tree::refresh::{refresh_all, refresh_plan, SummaryInput};
use memforest_tree::{
    Branching, LeafKey, MemNodeStore, MemTree, Payload, TimeRange, TreeConfig, TreeError, TreeId,
    TreeKind,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Insert after every existing key (start = max start + gap).
    Append {
        gap: i64,
        len: i64,
    },
    /// Insert at a random time (usually late).
    Late {
        start: i64,
        len: i64,
    },
    /// Delete the n-th existing key (modulo the count).
    Delete {
        nth: usize,
    },
    /// Delete a key that is not there.
    DeleteMissing {
        start: i64,
    },
    Range {
        start: i64,
        len: i64,
    },
    Neighbours {
        start: i64,
    },
    RefreshAll,
    /// Refresh only the lowest dirty level.
    RefreshLowest,
    /// Read an input, change the node, then offer the old summary.
    Stale {
        nth: usize,
    },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0i64..3, 0i64..3).prop_map(|(gap, len)| Op::Append { gap, len }),
        4 => (0i64..200, 0i64..5).prop_map(|(start, len)| Op::Late { start, len }),
        4 => any::<usize>().prop_map(|nth| Op::Delete { nth }),
        1 => (0i64..200).prop_map(|start| Op::DeleteMissing { start }),
        1 => (0i64..220, 0i64..40).prop_map(|(start, len)| Op::Range { start, len }),
        1 => (0i64..220).prop_map(|start| Op::Neighbours { start }),
        1 => Just(Op::RefreshAll),
        1 => Just(Op::RefreshLowest),
        1 => any::<usize>().prop_map(|nth| Op::Stale { nth }),
        1 => Just(Op::Reopen),
    ]
}

fn summarize(input: &SummaryInput) -> String {
    format!(
        "L{} {}..{} n={} h={:x}",
        input.level,
        input.time.start,
        input.time.end,
        input.children.len(),
        input.hash
    )
}

struct Harness {
    store: MemNodeStore,
    tree: MemTree,
    model: BTreeMap<LeafKey, String>,
    next_id: u64,
}

impl Harness {
    fn new(k: u16) -> Self {
        let mut store = MemNodeStore::new();
        let config = TreeConfig {
            scene: Branching::new(k).unwrap(),
            ..TreeConfig::default()
        };
        let tree =
            MemTree::create(&mut store, TreeId(7), TreeKind::Scene, "scene-7", &config).unwrap();
        Self {
            store,
            tree,
            model: BTreeMap::new(),
            next_id: 0,
        }
    }

    fn insert(&mut self, start: i64, len: i64) {
        self.next_id += 1;
        let key = LeafKey {
            time: TimeRange::new(start, start + len).unwrap(),
            payload: Payload::fact(self.next_id),
        };
        let text = format!("fact {} at {start}", self.next_id);
        self.tree.insert(&mut self.store, key, &text).unwrap();
        self.model.insert(key, text);
        self.assert_path_dirty(&key);
    }

    fn assert_path_dirty(&self, key: &LeafKey) {
        for id in self.tree.path(&self.store, key).unwrap() {
            let node = self.tree.node(&self.store, id).unwrap();
            assert!(node.dirty, "node {id} on the changed path is clean");
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Append { gap, len } => {
                let start = self.model.keys().map(|k| k.time.start).max().unwrap_or(0) + gap;
                self.insert(start, len);
            }
            Op::Late { start, len } => self.insert(start, len),
            Op::Delete { nth } => {
                if self.model.is_empty() {
                    return;
                }
                let key = *self.model.keys().nth(nth % self.model.len()).unwrap();
                let before = self.tree.path(&self.store, &key).unwrap();
                let removed = self.tree.delete(&mut self.store, &key).unwrap().unwrap();
                assert_eq!(removed.key, key);
                assert_eq!(Some(removed.text), self.model.remove(&key));
                // Every node that held the key is now dirty, or gone (merged away, collapsed).
                for id in before {
                    match self.tree.node(&self.store, id) {
                        Ok(node) => assert!(node.dirty, "node {id} lost a leaf but is clean"),
                        Err(TreeError::UnknownNode { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            Op::DeleteMissing { start } => {
                let key = LeafKey {
                    time: TimeRange::new(start, start).unwrap(),
                    payload: Payload::cell(u64::MAX),
                };
                let before = self.store.stats().writes;
                assert_eq!(self.tree.delete(&mut self.store, &key).unwrap(), None);
                assert_eq!(
                    self.store.stats().writes,
                    before,
                    "a missing key must not write"
                );
            }
            Op::Range { start, len } => {
                let range = TimeRange::new(start, start + len).unwrap();
                let got: Vec<LeafKey> = self
                    .tree
                    .range(&self.store, range)
                    .unwrap()
                    .into_iter()
                    .map(|e| e.key)
                    .collect();
                let want: Vec<LeafKey> = self
                    .model
                    .keys()
                    .filter(|k| k.time.overlaps(range))
                    .copied()
                    .collect();
                assert_eq!(got, want);
            }
            Op::Neighbours { start } => {
                let probe = LeafKey {
                    time: TimeRange::new(start, start).unwrap(),
                    payload: Payload::fact(0),
                };
                let n = self.tree.neighbours(&self.store, &probe).unwrap();
                let prev = self.model.range(..probe).next_back().map(|(k, _)| *k);
                let next = self
                    .model
                    .range(probe..)
                    .find(|(k, _)| **k != probe)
                    .map(|(k, _)| *k);
                assert_eq!(n.prev.map(|e| e.key), prev);
                assert_eq!(n.next.map(|e| e.key), next);
            }
            Op::RefreshAll => {
                let planned = refresh_plan(&[&self.tree]).len() as u64;
                let stats = refresh_all(&mut [&mut self.tree], &mut self.store, summarize).unwrap();
                assert_eq!(stats.calls + stats.reused, planned);
                assert!(self.tree.dirty().is_empty());
            }
            Op::RefreshLowest => {
                let plan = refresh_plan(&[&self.tree]);
                if let Some(level) = plan.levels.first() {
                    for item in &level.nodes {
                        let input = self.tree.summary_input(&self.store, item.node).unwrap();
                        self.tree
                            .apply_summary(&mut self.store, &input, &summarize(&input))
                            .unwrap();
                        assert!(!self.tree.node(&self.store, item.node).unwrap().dirty);
                    }
                }
            }
            Op::Stale { nth } => self.stale(nth),
            Op::Reopen => {
                let reopened = MemTree::open(&self.store, self.tree.id()).unwrap();
                assert_eq!(reopened.meta(), self.tree.meta());
                assert_eq!(reopened.dirty(), self.tree.dirty());
                self.tree = reopened;
            }
        }
    }

    /// Takes a level-1 node's input, deletes that node's first leaf, then offers a summary of
    /// the old input: it must be rejected and the node (if it still exists) stay dirty.
    fn stale(&mut self, nth: usize) {
        if self.model.is_empty() {
            return;
        }
        let key = *self.model.keys().nth(nth % self.model.len()).unwrap();
        let node = *self.tree.path(&self.store, &key).unwrap().last().unwrap();
        let input = self.tree.summary_input(&self.store, node).unwrap();
        self.tree.delete(&mut self.store, &key).unwrap().unwrap();
        self.model.remove(&key);
        match self.tree.apply_summary(&mut self.store, &input, "stale") {
            Err(TreeError::StaleSummary { .. }) => {
                assert!(self.tree.node(&self.store, node).unwrap().dirty)
            }
            Err(TreeError::UnknownNode { .. }) => {}
            other => panic!("stale summary accepted: {other:?}"),
        }
    }

    fn check(&self) {
        self.tree.verify(&self.store).unwrap();
        assert_eq!(self.tree.len(), self.model.len() as u64);
        let all = self
            .tree
            .range(&self.store, TimeRange::new(i64::MIN, i64::MAX).unwrap())
            .unwrap();
        let got: Vec<(LeafKey, String)> = all.into_iter().map(|e| (e.key, e.text)).collect();
        let want: Vec<(LeafKey, String)> =
            self.model.iter().map(|(k, v)| (*k, v.clone())).collect();
        assert_eq!(got, want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn tree_matches_sorted_model(k in 3u16..7, ops in proptest::collection::vec(op(), 1..300)) {
        let mut h = Harness::new(k);
        for op in ops {
            h.apply(op);
            h.check();
        }
    }
}

/// Grows a tree to several levels, then deletes everything in an interleaved order, checking
/// invariants throughout (merge, borrow and root collapse on every level), ending empty.
#[test]
fn delete_to_empty_collapses_the_root() {
    let mut h = Harness::new(3);
    for i in 0..120 {
        h.insert(i, 0);
    }
    for i in 0..60 {
        h.insert(i, 1);
    }
    h.check();
    assert!(h.tree.height() >= 4);
    let mut keys: Vec<LeafKey> = h.model.keys().copied().collect();
    // Interleave: middle-out, so both siblings' borrow and merge paths run.
    keys.sort_by_key(|k| (k.payload.id % 7, k.payload.id));
    for key in keys {
        assert!(h.tree.delete(&mut h.store, &key).unwrap().is_some());
        h.model.remove(&key);
        h.check();
    }
    assert!(h.tree.is_empty());
    assert_eq!(h.tree.height(), 0);
    // Only the meta page is left.
    assert_eq!(h.store.len(), 1);
    h.insert(5, 0);
    h.check();
}
