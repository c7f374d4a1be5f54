//! Routing state: a fact joins the open scene whose keyword profile contains most of its
//! topics (score 2 x containment without embeddings, threshold 0.6), a fact sharing no
//! topic starts its own scene, and full scenes and scenes closed by the open limit take no
//! more facts; an entity key that can never activate keeps no state.
#![allow(clippy::unwrap_used, reason = "test code")]

mod memory_common;

use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

use memforest::memory::record;
use memforest::memory::session::{Role, Session, Turn};
use memforest::{schema::Table, Memory};
use memforest_benches::synth::SynthExtractor;
use memforest_tree::TreeKind;
use memory_common::{facts, tenant, trees, DAY, T0};

/// Opens a db whose extractor reads `text | entity | topics` turns.
fn open(dir: &std::path::Path, capacity: usize, open_limit: usize) -> Memory {
    let mut o = memory_common::options(None);
    o.memory.extractor = Arc::new(SynthExtractor);
    // The keyword-only scoring these cases are written for (no cosine term).
    o.memory.embedder = None;
    o.memory.scene_capacity = capacity;
    o.memory.scene_open_limit = open_limit;
    Memory::open_with(dir, o).unwrap()
}

/// One session per call, one fact per `(text, topics)`.
fn ingest(db: &Memory, id: &str, day: i64, items: &[(&str, &str)]) {
    let turns = items
        .iter()
        .enumerate()
        .map(|(i, (text, topics))| Turn {
            time: Some(T0 + day * DAY + i as i64 * 60_000_000),
            ..Turn::new(Role::User, "Ann", format!("{text} | | {topics}"))
        })
        .collect();
    let session = Session {
        id: id.into(),
        start: T0 + day * DAY,
        turns,
    };
    db.ingest_session(&tenant(), &session).unwrap();
}

/// Fact text -> the scene tree it was routed to.
fn scene_of(db: &Memory) -> HashMap<String, u64> {
    let scenes: Vec<u64> = trees(db)
        .into_iter()
        .filter(|(_, t)| t.kind == TreeKind::Scene.as_u8())
        .map(|(id, _)| id)
        .collect();
    let texts: HashMap<u64, String> = facts(db).into_iter().map(|(id, f)| (id, f.text)).collect();
    let mut out = HashMap::new();
    for row in db
        .db()
        .scan(
            &tenant(),
            Table::Memberships.into(),
            Bound::Unbounded,
            Bound::Unbounded,
            None,
        )
        .unwrap()
    {
        let (k, _) = row.unwrap();
        let fact = record::be_u64(&k).unwrap();
        let tree = record::be_u64(&k[8..]).unwrap();
        if scenes.contains(&tree) {
            out.insert(texts[&fact].clone(), tree);
        }
    }
    out
}

#[test]
fn related_facts_share_a_scene_and_unrelated_ones_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), 60, 200);
    ingest(
        &db,
        "s1",
        0,
        &[
            ("walked the ridge", "hiking mountain"),
            ("made carbonara", "cooking pasta"),
            ("new boots for the ridge", "hiking mountain trail"),
        ],
    );
    ingest(
        &db,
        "s2",
        1,
        &[
            ("the north trail was icy", "trail mountain"),
            ("tomato sauce from scratch", "pasta sauce cooking"),
            ("paid the electricity bill", "bills electricity"),
            // Two of three topics in the cooking profile, one in the hiking one.
            ("pasta after the hike", "pasta sauce hiking"),
            // "hiking" is now in both profiles: a tie, won by the older scene.
            ("hiked after dinner", "hiking dinner"),
        ],
    );
    let scene = scene_of(&db);
    assert_eq!(scene.len(), 8, "every fact has a scene: {scene:?}");
    let hiking = scene["walked the ridge"];
    let cooking = scene["made carbonara"];
    assert_ne!(hiking, cooking);
    assert_eq!(scene["new boots for the ridge"], hiking);
    assert_eq!(scene["the north trail was icy"], hiking);
    assert_eq!(scene["tomato sauce from scratch"], cooking);
    let bills = scene["paid the electricity bill"];
    assert!(bills != hiking && bills != cooking);
    assert_eq!(scene["pasta after the hike"], cooking);
    assert_eq!(scene["hiked after dinner"], hiking);
    let distinct: std::collections::HashSet<u64> = scene.values().copied().collect();
    assert_eq!(distinct.len(), 3);
}

#[test]
fn full_and_closed_scenes_take_no_more_facts_even_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path(), 3, 2);
        ingest(
            &db,
            "s1",
            0,
            &[
                ("a1", "alpha"),
                ("a2", "alpha"),
                ("a3", "alpha"),
                // The alpha scene is full: a fourth alpha fact starts a new one.
                ("a4", "alpha"),
                ("b1", "beta"),
                // Opening gamma closes the least recently joined open scene (a4's).
                ("g1", "gamma"),
                ("b2", "beta"),
            ],
        );
        let scene = scene_of(&db);
        assert_eq!(scene["a1"], scene["a3"]);
        assert_ne!(scene["a4"], scene["a1"]);
        assert_eq!(scene["b2"], scene["b1"]);
        db.close().unwrap();
    }
    let db = open(dir.path(), 3, 2);
    ingest(&db, "s2", 1, &[("b3", "beta"), ("a5", "alpha")]);
    let scene = scene_of(&db);
    // After reopen the open scenes are those not full, newest numbers first: beta and
    // gamma; a4's scene (closed by the limit) stays closed, so a5 starts a new scene.
    assert!(scene["a5"] != scene["a4"] && scene["a5"] != scene["a1"]);
    assert_eq!(scene["b3"], scene["b1"]);
    let distinct: std::collections::HashSet<u64> = scene.values().copied().collect();
    assert_eq!(distinct.len(), 5);
}

#[test]
fn an_entity_that_can_never_activate_keeps_no_growing_state() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), 60, 200);
    for s in 0..3 {
        let turns = (0..4)
            .map(|i| Turn {
                time: Some(T0 + s * DAY + i * 60_000_000),
                ..Turn::new(
                    Role::User,
                    "Ann",
                    format!("visit {s} {i} | the quiet place | travel"),
                )
            })
            .collect();
        let session = Session {
            id: format!("s{s}"),
            start: T0 + s * DAY,
            turns,
        };
        db.ingest_session(&tenant(), &session).unwrap();
    }
    // Twelve facts over three sessions, but "the quiet place" has no capital or digit: it
    // never gets a tree, so no state (and no list of its facts) is kept for it.
    let any_state = db
        .db()
        .scan_prefix(&tenant(), Table::RouterState.into(), b"e", None)
        .unwrap()
        .count();
    assert_eq!(any_state, 0);
    assert!(trees(&db)
        .iter()
        .all(|(_, t)| t.kind != TreeKind::Entity.as_u8() || t.label == "user"));
}
