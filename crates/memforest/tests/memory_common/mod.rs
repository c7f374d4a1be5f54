//! Helpers shared by the memory-layer tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use std::ops::Bound;
use std::sync::Arc;

use memforest::memory::record::{self, FactRecord, TreeRecord};
use memforest::memory::session::{Role, Session, Turn};
use memforest::memory::summarize::Summarizer;
use memforest::memory::MemoryOptions;
use memforest::{schema::Table, EngineNodeStore, Memory, Options};
use memforest_engine::{Durability, TenantId};
use memforest_tree::{MemTree, NodeId, TreeId};

pub const DAY: i64 = 86_400_000_000;
/// 2023-03-01 00:00 UTC in microseconds.
pub const T0: i64 = 1_677_628_800_000_000;

pub fn options(summarizer: Option<Arc<dyn Summarizer>>) -> Options {
    let mut memory = MemoryOptions {
        extract_pool: 2,
        summary_pool: 4,
        ..MemoryOptions::default()
    };
    if let Some(s) = summarizer {
        memory.summarizer = s;
    }
    Options {
        memory,
        ..Options::default()
    }
}

pub fn tenant() -> TenantId {
    TenantId::new("t").unwrap()
}

/// A session of alternating user/assistant turns, one day apart per session index.
pub fn session(id: &str, day: i64, texts: &[&str]) -> Session {
    Session {
        id: id.into(),
        start: T0 + day * DAY,
        turns: texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let role = if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                };
                let name = if i % 2 == 0 { "Alice" } else { "Bot" };
                Turn {
                    time: Some(T0 + day * DAY + i as i64 * 60_000_000),
                    ..Turn::new(role, name, *t)
                }
            })
            .collect(),
    }
}

pub fn facts(db: &Memory) -> Vec<(u64, FactRecord)> {
    records(db, Table::Facts, "fact")
}

pub fn trees(db: &Memory) -> Vec<(u64, TreeRecord)> {
    records(db, Table::Trees, "tree")
}

/// Every row of `table` for the test tenant, keyed by its big-endian u64 id.
fn records<T: serde::de::DeserializeOwned>(
    db: &Memory,
    table: Table,
    what: &'static str,
) -> Vec<(u64, T)> {
    db.db()
        .scan(
            &tenant(),
            table.into(),
            Bound::Unbounded,
            Bound::Unbounded,
            None,
        )
        .unwrap()
        .map(|r| {
            let (k, v) = r.unwrap();
            (
                record::be_u64(&k).unwrap(),
                record::decode(&v, what).unwrap(),
            )
        })
        .collect()
}

/// The summary text of every tree's root that has one.
pub fn root_summaries(db: &Memory) -> Vec<String> {
    let store = EngineNodeStore::new(db.db(), tenant(), Durability::Buffered);
    trees(db)
        .into_iter()
        .filter_map(|(id, _)| {
            let tree = MemTree::open(&store, TreeId(id)).unwrap();
            let root = tree.meta().root?;
            tree.node(&store, root.id).unwrap().summary.map(|s| s.text)
        })
        .collect()
}

/// Asserts every tree is clean and every internal node's summary hash matches its current
/// children; returns the number of internal nodes checked.
pub fn assert_summaries_current(db: &Memory) -> usize {
    let store = EngineNodeStore::new(db.db(), tenant(), Durability::Buffered);
    let mut checked = 0;
    for (id, _) in trees(db) {
        let tree = MemTree::open(&store, TreeId(id)).unwrap();
        assert!(tree.dirty().is_empty(), "tree {id} still dirty");
        let Some(root) = tree.meta().root else {
            continue;
        };
        let mut stack: Vec<NodeId> = vec![root.id];
        while let Some(n) = stack.pop() {
            let node = tree.node(&store, n).unwrap();
            let input = tree.summary_input(&store, n).unwrap();
            let summary = node
                .summary
                .as_ref()
                .expect("internal node without summary");
            assert_eq!(summary.input_hash, input.hash, "stale summary in tree {id}");
            stack.extend(node.children().iter().map(|c| c.id));
            checked += 1;
        }
    }
    checked
}
