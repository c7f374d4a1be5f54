//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failed assertion"
)]

use memforest_tree::refresh::SummaryInput;
use memforest_tree::{
    Branching, LeafKey, MemNodeStore, MemTree, Payload, TimeRange, TreeConfig, TreeId, TreeKind,
};

/// A fresh store holding one empty entity tree with branching factor `k`.
pub fn tree(k: u16) -> (MemNodeStore, MemTree) {
    let mut store = MemNodeStore::new();
    let tree = new_tree(&mut store, TreeId(1), k);
    (store, tree)
}

/// Creates entity tree `id` with branching factor `k` in `store`.
pub fn new_tree(store: &mut MemNodeStore, id: TreeId, k: u16) -> MemTree {
    let config = TreeConfig {
        entity: Branching::new(k).unwrap(),
        ..TreeConfig::default()
    };
    MemTree::create(store, id, TreeKind::Entity, &format!("e{}", id.0), &config).unwrap()
}

/// Fact `id` at second `t` (a point in time).
pub fn fact(t: i64, id: u64) -> LeafKey {
    LeafKey {
        time: TimeRange::new(t * 1_000_000, t * 1_000_000).unwrap(),
        payload: Payload::fact(id),
    }
}

/// Appends facts `from..to` in time order, fact `i` at second `i`.
pub fn append(store: &mut MemNodeStore, tree: &mut MemTree, from: u64, to: u64) {
    for i in from..to {
        tree.insert(
            store,
            fact(i64::try_from(i).unwrap(), i),
            &format!("fact {i}"),
        )
        .unwrap();
    }
}

/// A stand-in summarizer: deterministic text derived from the input.
pub fn summarize(input: &SummaryInput) -> String {
    format!(
        "L{} x{} {:016x}",
        input.level,
        input.children.len(),
        input.hash
    )
}
