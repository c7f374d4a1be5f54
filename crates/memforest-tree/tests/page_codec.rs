#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "test generators: a panic is a failed assertion; truncation is the point of the fake CRCs"
)]

//! Page codec: round trips, canonical encoding, and arbitrary bytes never panic.

use memforest_tree::meta::{RootRef, TreeMeta};
use memforest_tree::page::{self, Page};
use memforest_tree::{
    Branching, ChildRef, LeafEntry, LeafKey, Node, NodeBody, NodeId, Payload, PayloadKind, Summary,
    TimeRange, TreeKind,
};
use proptest::prelude::*;

fn key() -> impl Strategy<Value = LeafKey> {
    (any::<i64>(), 0i64..1000, any::<bool>(), any::<u64>()).prop_map(|(start, len, cell, id)| {
        LeafKey {
            time: TimeRange::new(start, start.saturating_add(len)).unwrap(),
            payload: Payload {
                kind: if cell {
                    PayloadKind::Cell
                } else {
                    PayloadKind::Fact
                },
                id,
            },
        }
    })
}

fn sorted_keys(max: usize) -> impl Strategy<Value = Vec<LeafKey>> {
    proptest::collection::btree_set(key(), 1..max).prop_map(|s| s.into_iter().collect())
}

fn node() -> impl Strategy<Value = Node> {
    let summary = proptest::option::of((any::<u64>(), ".{0,40}").prop_map(|(h, t)| Summary {
        input_hash: h,
        text: t,
    }));
    let leaves =
        (sorted_keys(20), proptest::collection::vec(".{0,30}", 20)).prop_map(|(keys, texts)| {
            NodeBody::Leaves(
                keys.into_iter()
                    .zip(texts)
                    .map(|(key, text)| LeafEntry { key, text })
                    .collect(),
            )
        });
    let children = (sorted_keys(20), any::<u64>()).prop_map(|(keys, seed)| {
        NodeBody::Children(
            keys.into_iter()
                .enumerate()
                .map(|(i, first)| ChildRef {
                    id: NodeId(i as u64 + 1),
                    first,
                    time: TimeRange::new(first.time.start, first.time.end.saturating_add(i as i64))
                        .unwrap(),
                    items: (seed >> (i % 32)) % 1000 + 1,
                    crc: seed.rotate_left(i as u32) as u32,
                })
                .collect(),
        )
    });
    (
        prop_oneof![leaves, children],
        2u8..40,
        any::<u64>(),
        any::<bool>(),
        summary,
    )
        .prop_map(|(body, upper, version, dirty, summary)| Node {
            level: if matches!(body, NodeBody::Leaves(_)) {
                1
            } else {
                upper
            },
            version,
            dirty,
            summary,
            body,
        })
}

fn meta() -> impl Strategy<Value = TreeMeta> {
    (
        0u8..3,
        ".{0,20}",
        3u16..=1024,
        any::<Option<(u64, u8, u32)>>(),
        any::<u64>(),
    )
        .prop_map(|(kind, label, k, root, n)| {
            let mut meta = TreeMeta::new(
                [TreeKind::Session, TreeKind::Entity, TreeKind::Scene][usize::from(kind)],
                label,
                Branching::new(k).unwrap(),
            );
            if let Some((id, level, crc)) = root {
                meta.root = Some(RootRef {
                    id: NodeId(id % 1000 + 1),
                    level: level.max(1),
                    crc,
                });
                meta.items = n % 10_000 + 1;
                meta.next_node = 1001;
                meta.version = n;
                meta.dirty_nodes = n % 7;
            }
            meta
        })
}

proptest! {
    #[test]
    fn node_round_trip_is_canonical(node in node()) {
        let bytes = page::encode_node(&node);
        let decoded = page::decode(&bytes).unwrap();
        prop_assert_eq!(&decoded, &Page::Node(node));
        if let Page::Node(n) = decoded {
            prop_assert_eq!(page::encode_node(&n), bytes);
        }
    }

    #[test]
    fn meta_round_trip(meta in meta()) {
        let bytes = page::encode_meta(&meta);
        prop_assert_eq!(page::decode(&bytes).unwrap(), Page::Meta(meta));
    }

    /// Any single flipped bit in a valid page is rejected (the CRC covers every byte).
    #[test]
    fn any_bit_flip_is_rejected(node in node(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut bytes = page::encode_node(&node);
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        prop_assert!(page::decode(&bytes).is_err());
    }

    /// Truncations are errors, never panics.
    #[test]
    fn truncation_is_rejected(node in node(), at in any::<prop::sample::Index>()) {
        let bytes = page::encode_node(&node);
        let cut = at.index(bytes.len());
        prop_assert!(page::decode(&bytes[..cut]).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = page::decode(&bytes);
    }
}

/// Well-formed CRC but broken structure: the decoder's semantic checks, each with its offset.
#[test]
fn structural_errors_name_their_offset() {
    let leaf = |s: i64| LeafEntry {
        key: LeafKey {
            time: TimeRange::new(s, s).unwrap(),
            payload: Payload::fact(1),
        },
        text: String::new(),
    };
    let node = Node::new(1, 0, NodeBody::Leaves(vec![leaf(5), leaf(3)]));
    let err = page::decode(&page::encode_node(&node)).unwrap_err();
    assert_eq!(err.reason, "leaves out of key order");
    // header 8 + level/flags/count 4 + version 8 + time 16 + items 8 + first leaf 25 + 4.
    assert_eq!(err.offset, 8 + 4 + 8 + 16 + 8 + 29);

    let wrong_level = Node {
        level: 2,
        ..Node::new(1, 0, NodeBody::Leaves(vec![leaf(1)]))
    };
    assert_eq!(
        page::decode(&page::encode_node(&wrong_level))
            .unwrap_err()
            .reason,
        "level does not match page kind"
    );

    let empty = Node::new(1, 0, NodeBody::Leaves(vec![]));
    assert_eq!(
        page::decode(&page::encode_node(&empty)).unwrap_err().reason,
        "entry count out of range"
    );
}
