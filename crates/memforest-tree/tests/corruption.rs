#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a panic is a failed assertion"
)]

//! Corruption is detected on descent and reported as a typed error naming tree and node.

mod common;

use common::{append, fact, tree};
use memforest_tree::{MemNodeStore, MemTree, NodeId, PageKey, TimeRange, TreeError, TreeId};

fn key(node: NodeId) -> PageKey {
    PageKey {
        tree: TreeId(1),
        node,
    }
}

/// A tree of height 3 and the id of its first level-1 node (a child of a child of the root).
fn three_levels() -> (MemNodeStore, MemTree, NodeId) {
    let (mut store, mut t) = tree(4);
    append(&mut store, &mut t, 0, 40);
    assert_eq!(t.height(), 3);
    let path = t.path(&store, &fact(0, 0)).unwrap();
    (store, t, path[2])
}

#[test]
fn flipped_byte_in_child_page_is_a_page_error() {
    let (mut store, t, bottom) = three_levels();
    let page = store.page_mut(key(bottom)).unwrap();
    page[20] ^= 0x40;
    match t.range(&store, TimeRange::new(0, 0).unwrap()) {
        Err(TreeError::Page { tree, node, source }) => {
            assert_eq!((tree, node), (TreeId(1), bottom));
            // The CRC check fails first; its offset is the trailer's.
            assert_eq!(source.reason, "page checksum mismatch");
        }
        other => panic!("expected a page error, got {other:?}"),
    }
    let mut t = t;
    assert!(matches!(
        t.insert(&mut store, fact(0, 99), "x"),
        Err(TreeError::Page { .. })
    ));
    assert!(matches!(t.verify(&store), Err(TreeError::Page { .. })));
}

/// An intact page that is not the one the parent recorded (an old version: a lost write) is
/// caught by the CRC the parent keeps for it.
#[test]
fn stale_child_page_is_a_checksum_mismatch() {
    let (mut store, mut t, bottom) = three_levels();
    let old = store.page_mut(key(bottom)).unwrap().clone();
    // Rewrite the page (a new summary) without moving it.
    let input = t.summary_input(&store, bottom).unwrap();
    t.apply_summary(&mut store, &input, "summary").unwrap();
    *store.page_mut(key(bottom)).unwrap() = old;
    match t.range(&store, TimeRange::new(0, 2_000_000).unwrap()) {
        Err(TreeError::ChecksumMismatch {
            node,
            expected,
            found,
            ..
        }) => {
            assert_eq!(node, bottom);
            assert_ne!(expected, found);
        }
        other => panic!("expected a checksum mismatch, got {other:?}"),
    }
    assert!(matches!(
        t.delete(&mut store, &fact(0, 0)),
        Err(TreeError::ChecksumMismatch { .. })
    ));
}

#[test]
fn missing_child_page_is_reported() {
    let (mut store, t, bottom) = three_levels();
    let mut batch = memforest_tree::PageBatch::default();
    batch.delete(key(bottom));
    memforest_tree::NodeStore::apply(&mut store, batch).unwrap();
    assert!(matches!(
        t.neighbours(&store, &fact(0, 0)),
        Err(TreeError::MissingPage { node, .. }) if node == bottom
    ));
}

#[test]
fn corrupt_meta_page_fails_open() {
    let (mut store, _t, _) = three_levels();
    store.page_mut(key(NodeId::META)).unwrap()[9] ^= 1;
    assert!(matches!(
        MemTree::open(&store, TreeId(1)),
        Err(TreeError::Page {
            node: NodeId::META,
            ..
        })
    ));
    assert!(matches!(
        MemTree::open(&store, TreeId(2)),
        Err(TreeError::MissingPage {
            node: NodeId::META,
            ..
        })
    ));
}

/// A node page where the meta page belongs (or the reverse) is a typed corruption error.
#[test]
fn page_of_the_wrong_kind_is_rejected() {
    let (mut store, t, bottom) = three_levels();
    let node_page = store.page_mut(key(bottom)).unwrap().clone();
    *store.page_mut(key(NodeId::META)).unwrap() = node_page;
    assert!(matches!(
        MemTree::open(&store, TreeId(1)),
        Err(TreeError::Corrupt { .. })
    ));
    assert!(matches!(
        t.node(&store, NodeId::META),
        Err(TreeError::UnknownNode { .. })
    ));
}
