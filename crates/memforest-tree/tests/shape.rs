#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a panic is a failed assertion"
)]

//! Tree shape: the configured branching factor is kept from the first fact on, time-ordered
//! appends keep nodes full, and an insert costs one root-to-leaf path of pages.

mod common;

use common::{append, fact, tree};
use memforest_tree::{LeafKey, MemNodeStore, MemTree, TreeId};

/// The reference implementation gave a tree created from one fact k = 2, so 200 appends made a
/// 200-level tree. Here the tree keeps the configured k, whatever its size.
#[test]
fn tree_created_from_one_fact_keeps_configured_k() {
    for (k, max_height) in [(16u16, 2u8), (3, 6)] {
        let (mut store, mut t) = tree(k);
        append(&mut store, &mut t, 0, 1);
        assert_eq!(t.meta().branching.get(), k);
        append(&mut store, &mut t, 1, 200);
        let shape = t.verify(&store).unwrap();
        assert_eq!(t.meta().branching.get(), k);
        assert!(
            t.height() <= max_height,
            "k={k}: 200 appends gave height {}",
            t.height()
        );
        assert_eq!(shape.items, 200);
    }
}

/// The branching factor survives a reopen (it lives in the meta page, not the config).
#[test]
fn branching_factor_is_persisted() {
    let (mut store, mut t) = tree(5);
    append(&mut store, &mut t, 0, 40);
    let reopened = MemTree::open(&store, TreeId(1)).unwrap();
    assert_eq!(reopened.meta().branching.get(), 5);
    assert_eq!(reopened.height(), t.height());
}

fn assert_append_shape(n: u64, k: u16, heights: &[u8]) {
    let (mut store, mut t) = tree(k);
    append(&mut store, &mut t, 0, n);
    let shape = t.verify(&store).unwrap();
    let fill = shape.fill(k);
    assert!(
        heights.contains(&t.height()),
        "N={n} k={k}: height {}",
        t.height()
    );
    assert!(fill >= 0.90, "N={n} k={k}: average node fill {fill:.3}");
}

/// Halving splits would leave an append-only tree about half full; the right-edge split keeps
/// the left node full.
#[test]
fn time_ordered_appends_keep_nodes_full() {
    // 20,000 / 16 = 1,250 level-1 nodes, 79 level-2, 5 level-3, 1 root.
    assert_append_shape(20_000, 16, &[4]);
    assert_append_shape(5_000, 3, &[8, 9]);
}

/// The figure: 1,000,000 time-ordered appends at k = 16 give height 5 or 6 (leaf level
/// included: 5 node levels) and average fill >= 90%. Release only:
/// `cargo test -p memforest-tree --release --test shape -- --ignored`.
#[test]
#[ignore = "1M inserts: run in release"]
fn million_appends_at_k16() {
    assert_append_shape(1_000_000, 16, &[5, 6]);
}

/// An insert reads the pages of one root-to-bottom path and writes those pages, the pages a
/// split creates and the meta page: O(log_k N), whatever N.
#[test]
fn insert_reads_and_writes_one_path() {
    let (mut store, mut t) = tree(8);
    // Out-of-order inserts, so descents go everywhere: i * 7919 mod 4000 visits each once.
    for i in 0..4000u64 {
        let key = fact(i64::try_from(i * 7919 % 4000).unwrap(), i);
        let height = u64::from(t.height());
        let before = store.stats();
        t.insert(&mut store, key, "x").unwrap();
        let after = store.stats();
        assert_eq!(after.reads - before.reads, height, "insert {i}");
        let writes = after.writes - before.writes;
        // Path + meta, plus at most one new sibling per level and a new root.
        assert!(
            writes > height && writes <= 2 * height + 2,
            "insert {i}: {writes} writes at height {height}"
        );
    }
    assert_eq!(t.verify(&store).unwrap().items, 4000);
}

/// Deletes cost O(log N) too: the path, plus one sibling per level when rebalancing.
#[test]
fn delete_reads_a_bounded_number_of_pages() {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 3000);
    for i in (0..3000u64).step_by(3) {
        let height = u64::from(t.height());
        let before = store.stats().reads;
        assert!(t
            .delete(&mut store, &fact(i64::try_from(i).unwrap(), i))
            .unwrap()
            .is_some());
        let reads = store.stats().reads - before;
        assert!(
            reads >= height && reads <= 2 * height + 1,
            "delete {i}: {reads} reads at height {height}"
        );
    }
    t.verify(&store).unwrap();
}

/// Late facts land at their time position; range queries and neighbours see them there.
#[test]
fn late_fact_goes_to_its_time_position() {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 100);
    let late = fact(50, 1000);
    t.insert(&mut store, late, "late").unwrap();
    let around = t
        .range(&store, late.time)
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect::<Vec<LeafKey>>();
    assert_eq!(around, vec![fact(50, 50), late]);
    let n = t.neighbours(&store, &late).unwrap();
    assert_eq!(n.prev.map(|e| e.key), Some(fact(50, 50)));
    assert_eq!(n.next.map(|e| e.key), Some(fact(51, 51)));
    t.verify(&store).unwrap();
}

/// A range query reads O(log N + results / k) pages, not the whole tree.
#[test]
fn range_query_reads_few_pages() {
    let (mut store, mut t) = tree(16);
    append(&mut store, &mut t, 0, 20_000);
    let store_ref: &MemNodeStore = &store;
    let before = store_ref.stats().reads;
    let hits = t
        .range(store_ref, fact(10_000, 0).time.union(fact(10_031, 0).time))
        .unwrap();
    let reads = store_ref.stats().reads - before;
    assert_eq!(hits.len(), 32);
    // 4 levels; 32 consecutive leaves span at most 3 level-1 nodes.
    assert!(reads <= 4 + 2 + 3, "{reads} page reads");
}

/// A leaf inserted again with the same text changes nothing (not the item count, the
/// version or a page); with another text it is refused as a duplicate key.
#[test]
fn inserting_a_leaf_again_is_a_no_op_with_its_text_and_refused_with_another() {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 20);
    let key = fact(7, 7);
    let text = "fact 7";
    let (items, version) = (t.meta().items, t.meta().version);
    let writes = store.stats().writes;
    t.insert(&mut store, key, text).unwrap();
    assert_eq!((t.meta().items, t.meta().version), (items, version));
    assert_eq!(store.stats().writes, writes, "no page was written");
    let err = t.insert(&mut store, key, "another text").unwrap_err();
    assert!(
        matches!(err, memforest_tree::TreeError::DuplicateKey { .. }),
        "{err}"
    );
    assert_eq!(t.verify(&store).unwrap().items, 20);
}
