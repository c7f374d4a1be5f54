//! `tree_page_decode`: arbitrary bytes as a MemTree page. Decoding returns a page or a typed
//! error, never panics; a page that decodes re-encodes to the same bytes (the encoding is
//! canonical); and a node page that decodes, installed as the root of a tree, survives every
//! tree operation (open, verify, range, neighbours, insert, delete, refresh) without a panic.
//! Each input is also checked *resealed* (its last four bytes replaced by the right CRC), so
//! the fuzzer gets past the checksum into the structural checks and the tree code.

use memforest_codec::checksum::masked_crc32;
use memforest_tree::meta::{RootRef, TreeMeta};
use memforest_tree::page::{self, Page};
use memforest_tree::refresh::refresh_all;
use memforest_tree::{
    Branching, LeafKey, MemNodeStore, MemTree, Node, NodeId, NodeStore, PageBatch, PageKey,
    Payload, TimeRange, TreeId, TreeKind,
};

/// Runs the check on one input, as given and resealed.
pub fn check(data: &[u8]) {
    check_page(data);
    if let Some(body_len) = data.len().checked_sub(4) {
        let mut resealed = data.to_vec();
        resealed.truncate(body_len);
        let crc = masked_crc32(&[&resealed]);
        resealed.extend_from_slice(&crc.to_le_bytes());
        check_page(&resealed);
    }
}

fn check_page(data: &[u8]) {
    match page::decode(data) {
        Ok(Page::Node(node)) => {
            assert_eq!(
                page::encode_node(&node),
                data,
                "node encoding is not canonical"
            );
            exercise_as_root(data, &node);
        }
        Ok(Page::Meta(meta)) => {
            assert_eq!(
                page::encode_meta(&meta),
                data,
                "meta encoding is not canonical"
            );
        }
        Err(e) => assert!(e.offset <= data.len(), "error offset past the input"),
    }
}

/// Installs `data` as node 1, the root of tree 1, and runs every operation on it.
fn exercise_as_root(data: &[u8], node: &Node) {
    let tree = TreeId(1);
    let mut meta = TreeMeta::new(TreeKind::Scene, "fuzz".to_owned(), Branching::default());
    meta.root = Some(RootRef {
        id: NodeId(1),
        level: node.level,
        crc: page::page_crc(data).unwrap_or_default(),
    });
    meta.items = node.items();
    meta.next_node = 2;
    meta.dirty_nodes = u64::from(node.dirty);
    let mut store = MemNodeStore::new();
    let mut batch = PageBatch::default();
    batch.put(
        PageKey {
            tree,
            node: NodeId::META,
        },
        page::encode_meta(&meta),
    );
    batch.put(
        PageKey {
            tree,
            node: NodeId(1),
        },
        data.to_vec(),
    );
    if store.apply(batch).is_err() {
        return;
    }
    let Ok(mut t) = MemTree::open(&store, tree) else {
        return;
    };
    let _ = t.verify(&store);
    let everything = TimeRange {
        start: i64::MIN,
        end: i64::MAX,
    };
    let _ = t.range(&store, everything);
    let Some(first) = node.first_key() else {
        return;
    };
    let _ = t.neighbours(&store, &first);
    let late = LeafKey {
        time: first.time,
        payload: Payload::cell(u64::MAX),
    };
    let _ = t.insert(&mut store, late, "fuzz");
    let _ = t.delete(&mut store, &first);
    let _ = refresh_all(&mut [&mut t], &mut store, |input| {
        format!("{:x}", input.hash)
    });
    let _ = t.verify(&store);
}
