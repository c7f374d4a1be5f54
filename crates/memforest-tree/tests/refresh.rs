#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a panic is a failed assertion"
)]

//! Dirty sets and the refresh plan: bottom-up levels across trees, hash-checked application,
//! stale results rejected, and batched refresh cheaper than eager refresh.

mod common;

use common::{append, fact, new_tree, summarize, tree};
use memforest_tree::cost::refresh_cost;
use memforest_tree::refresh::{refresh_all, refresh_plan, InputStamp, SummaryInput};
use memforest_tree::{MemNodeStore, NodeId, NodeStore, PageBatch, PageKey, TreeError, TreeId};

#[test]
fn plan_groups_dirty_nodes_of_all_trees_by_level_bottom_up() {
    let mut store = MemNodeStore::new();
    let mut a = new_tree(&mut store, TreeId(1), 4);
    let mut b = new_tree(&mut store, TreeId(2), 8);
    append(&mut store, &mut a, 0, 100);
    append(&mut store, &mut b, 0, 20);
    let plan = refresh_plan(&[&a, &b]);
    let levels: Vec<u8> = plan.levels.iter().map(|l| l.level).collect();
    assert_eq!(levels, (1..=a.height()).collect::<Vec<_>>());
    for level in &plan.levels {
        for tree in [&a, &b] {
            let planned: Vec<_> = level
                .nodes
                .iter()
                .filter(|i| i.tree == tree.id())
                .map(|i| i.node)
                .collect();
            let dirty = tree.dirty().level(level.level);
            assert_eq!(planned, dirty);
        }
    }
    // Everything was just inserted: every node is dirty.
    let nodes = |s: &memforest_tree::TreeShape| s.nodes.iter().sum::<u64>();
    let total = nodes(&a.verify(&store).unwrap()) + nodes(&b.verify(&store).unwrap());
    assert_eq!(plan.len() as u64, total);
    let stats = refresh_all(&mut [&mut a, &mut b], &mut store, summarize).unwrap();
    assert_eq!(stats.calls, total);
    assert!(refresh_plan(&[&a, &b]).is_empty());
    a.verify(&store).unwrap();
    b.verify(&store).unwrap();
}

#[test]
fn insert_dirties_exactly_its_path() {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 60);
    refresh_all(&mut [&mut t], &mut store, summarize).unwrap();
    // A late fact into a node with room (deleting first makes room without a split).
    t.delete(&mut store, &fact(21, 21)).unwrap();
    refresh_all(&mut [&mut t], &mut store, summarize).unwrap();
    assert!(t.dirty().is_empty());
    t.insert(&mut store, fact(21, 500), "late").unwrap();
    let path = t.path(&store, &fact(21, 500)).unwrap();
    assert_eq!(t.dirty().len(), path.len());
    for id in &path {
        assert!(t.node(&store, *id).unwrap().dirty);
    }
    // Marks coalesce: a second change on the same path adds nothing.
    t.delete(&mut store, &fact(22, 22)).unwrap();
    assert_eq!(t.dirty().len(), path.len());
}

#[test]
fn summary_application_is_bottom_up_and_version_checked() {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 12);
    assert_eq!(t.height(), 2);
    let root = t.path(&store, &fact(0, 0)).unwrap()[0];
    let child = t.path(&store, &fact(0, 0)).unwrap()[1];
    // The root's input needs its children's summaries.
    assert!(matches!(
        t.summary_input(&store, root),
        Err(TreeError::ChildDirty { .. })
    ));

    let input = t.summary_input(&store, child).unwrap();
    assert_eq!(input.level, 1);
    assert_eq!(input.children.len(), 4);
    assert_eq!(input.children[0].text, "fact 0");
    // A stamp of another version is rejected and the node stays dirty.
    let wrong = SummaryInput {
        stamp: InputStamp {
            version: input.stamp.version + 1,
            ..input.stamp
        },
        ..input.clone()
    };
    let err = t.apply_summary(&mut store, &wrong, "wrong").unwrap_err();
    assert!(matches!(err, TreeError::StaleSummary { .. }));
    assert!(t.node(&store, child).unwrap().dirty);
    // The right one is accepted: clean child, still-dirty parent.
    t.apply_summary(&mut store, &input, "first four facts")
        .unwrap();
    assert!(!t.node(&store, child).unwrap().dirty);
    assert!(t.node(&store, root).unwrap().dirty);
    t.verify(&store).unwrap();

    // An insert under the clean child after its input was read makes a summary of that input
    // stale: rejected, node dirty again.
    let old = t.summary_input(&store, child).unwrap();
    t.insert(&mut store, fact(0, 99), "late").unwrap();
    if t.path(&store, &fact(0, 99)).unwrap().contains(&child) {
        assert!(matches!(
            t.apply_summary(&mut store, &old, "stale"),
            Err(TreeError::StaleSummary { .. })
        ));
        assert!(t.node(&store, child).unwrap().dirty);
    }
    t.verify(&store).unwrap();
}

/// A changed summary of a clean node makes its parent's input change: the parent is dirtied.
#[test]
fn accepted_summary_dirties_the_parent() {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 12);
    refresh_all(&mut [&mut t], &mut store, summarize).unwrap();
    assert!(t.dirty().is_empty());
    let path = t.path(&store, &fact(0, 0)).unwrap();
    let input = t.summary_input(&store, path[1]).unwrap();
    t.apply_summary(&mut store, &input, "a better summary")
        .unwrap();
    assert!(t.node(&store, path[0]).unwrap().dirty);
    assert_eq!(t.dirty().len(), 1);
    t.verify(&store).unwrap();
    // Re-applying the same text to the clean node changes nothing.
    let before = store.stats().writes;
    t.apply_summary(&mut store, &input, "a better summary")
        .unwrap();
    assert_eq!(store.stats().writes, before);
}

/// A parent's input read before a child's summary changed is stale once it has: the accepted
/// child summary changes the parent's page, so the parent's summary of the old input is
/// rejected.
#[test]
fn a_changed_child_summary_makes_the_parents_earlier_input_stale() {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 12);
    refresh_all(&mut [&mut t], &mut store, summarize).unwrap();
    let path = t.path(&store, &fact(0, 0)).unwrap();
    let parent = t.summary_input(&store, path[0]).unwrap();
    let child = t.summary_input(&store, path[1]).unwrap();
    t.apply_summary(&mut store, &child, "a better summary")
        .unwrap();
    let err = t
        .apply_summary(&mut store, &parent, "made from the old child summary")
        .unwrap_err();
    assert!(matches!(err, TreeError::StaleSummary { .. }), "{err}");
    assert!(t.node(&store, path[0]).unwrap().dirty);
    // The parent's input read now has the new child summary, and its summary is accepted.
    let fresh = t.summary_input(&store, path[0]).unwrap();
    assert!(fresh.children.iter().any(|c| c.text == "a better summary"));
    assert_ne!(fresh.hash, parent.hash);
    t.apply_summary(&mut store, &fresh, "parent").unwrap();
    assert!(t.dirty().is_empty());
    t.verify(&store).unwrap();
}

/// A dirty parent whose input was read, then a child summary changed: only the child CRC
/// in the parent's page differs (the parent was dirty all along), and that alone makes the
/// parent's summary of the earlier input stale.
#[test]
fn a_child_crc_alone_makes_a_dirty_parents_input_stale() {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 12);
    refresh_all(&mut [&mut t], &mut store, summarize).unwrap();
    let path = t.path(&store, &fact(0, 0)).unwrap();
    let child = t.summary_input(&store, path[1]).unwrap();
    t.apply_summary(&mut store, &child, "v2").unwrap();
    assert!(t.node(&store, path[0]).unwrap().dirty);
    let parent = t.summary_input(&store, path[0]).unwrap();
    let child = t.summary_input(&store, path[1]).unwrap();
    t.apply_summary(&mut store, &child, "v3").unwrap();
    let now = t.summary_input(&store, path[0]).unwrap();
    assert_eq!(now.stamp.version, parent.stamp.version);
    let err = t
        .apply_summary(&mut store, &parent, "made from v2")
        .unwrap_err();
    assert!(matches!(err, TreeError::StaleSummary { .. }), "{err}");
    t.apply_summary(&mut store, &now, "made from v3").unwrap();
    assert!(t.dirty().is_empty());
}

/// A tree deleted and created again under the same id starts its node ids and versions
/// over; a summary of the old tree's input must not be accepted by the new tree's node.
#[test]
fn a_stamp_from_a_deleted_tree_is_rejected_by_its_recreation() {
    let mut store = MemNodeStore::new();
    let id = TreeId(7);
    let mut t = new_tree(&mut store, id, 4);
    t.insert(&mut store, fact(0, 1), "secret fact A").unwrap();
    let root = t.meta().root.unwrap().id;
    let old = t.summary_input(&store, root).unwrap();
    // The tree empties and is deleted, meta page included (as the engine's forget does).
    t.delete(&mut store, &fact(0, 1)).unwrap();
    let mut b = PageBatch::default();
    b.delete(PageKey {
        tree: id,
        node: NodeId::META,
    });
    store.apply(b).unwrap();
    let mut t = new_tree(&mut store, id, 4);
    t.insert(&mut store, fact(100, 2), "unrelated fact B")
        .unwrap();
    let now = t.summary_input(&store, root).unwrap();
    assert_eq!((now.node, now.stamp.version), (old.node, old.stamp.version));
    let err = t
        .apply_summary(&mut store, &old, "summary of secret fact A")
        .unwrap_err();
    assert!(matches!(err, TreeError::StaleSummary { .. }), "{err}");
    assert!(t.node(&store, root).unwrap().dirty);
}

/// Insert then delete the same fact: the path is dirty but its inputs are unchanged, so the
/// previous summaries are reused without a summarizer call.
#[test]
fn unchanged_input_reuses_the_summary() {
    let (mut store, mut t) = tree(16);
    append(&mut store, &mut t, 0, 100);
    refresh_all(&mut [&mut t], &mut store, summarize).unwrap();
    // The last level-1 node (facts 96..99) has room: no split, no merge.
    t.insert(&mut store, fact(97, 1000), "temporary").unwrap();
    t.delete(&mut store, &fact(97, 1000)).unwrap();
    let dirty = t.dirty().len() as u64;
    assert!(dirty > 0);
    let stats = refresh_all(&mut [&mut t], &mut store, summarize).unwrap();
    assert_eq!((stats.calls, stats.reused), (0, dirty));
}

/// The paper's Fig. 6a: refreshing once per batch of B inserts needs fewer summary calls than
/// refreshing after every insert, and the saving grows with B.
#[test]
fn batched_refresh_needs_fewer_calls_than_eager() {
    for k in [4u16, 16] {
        let one = refresh_cost(k, 1, 500, 512).unwrap();
        assert_eq!(one.batched_calls, one.eager_calls);
        let b16 = refresh_cost(k, 16, 500, 512).unwrap();
        let b256 = refresh_cost(k, 256, 500, 512).unwrap();
        assert_eq!(b16.eager_calls, one.eager_calls);
        assert!(b16.batched_calls < b16.eager_calls, "k={k}: {b16:?}");
        assert!(b256.batched_calls < b16.batched_calls, "k={k}: {b256:?}");
        // Eager refresh regenerates the whole path after every insert: at least one call per
        // level per fact.
        assert!(one.eager_per_fact() >= 2.0, "k={k}: {one:?}");
    }
}
