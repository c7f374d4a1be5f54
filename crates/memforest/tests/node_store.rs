//! MemTree node pages persisted through the engine, committed in the same batch as the
//! facts that caused them.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use memforest::schema::Table;
use memforest::{EngineNodeStore, SnapshotNodeStore, StagedNodeStore};
use memforest_engine::{Db, Durability, Options, TenantId, WriteBatch};
use memforest_tree::{
    LeafKey, MemTree, NodeStore, PageBatch, Payload, TimeRange, TreeConfig, TreeError, TreeId,
    TreeKind,
};

fn leaf(i: u64) -> LeafKey {
    LeafKey {
        time: TimeRange::new(i as i64 * 10, i as i64 * 10 + 5).unwrap(),
        payload: Payload::fact(i),
    }
}

#[test]
fn facts_and_tree_pages_commit_together_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::new("agent").unwrap();
    let config = TreeConfig::uniform(4).unwrap();
    let tree_id = TreeId(3);
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let mut tree = {
            let mut store = EngineNodeStore::new(&db, t.clone(), Durability::SyncData);
            MemTree::create(&mut store, tree_id, TreeKind::Entity, "user", &config).unwrap()
        };
        for i in 0..40u64 {
            let mut batch = WriteBatch::new();
            let text = format!("fact {i}");
            batch.put(&t, Table::Facts.into(), &i.to_be_bytes(), text.as_bytes());
            {
                let mut staged = StagedNodeStore::new(&db, t.clone(), &mut batch);
                tree.insert(&mut staged, leaf(i), &text).unwrap();
            }
            db.write(&batch, Durability::SyncData).unwrap();
            if i == 20 {
                db.flush().unwrap();
            }
        }
        // A staged batch that is never written leaves neither the fact nor the pages.
        let mut lost = WriteBatch::new();
        lost.put(&t, Table::Facts.into(), &99u64.to_be_bytes(), b"fact 99");
        let mut scratch = tree.clone();
        scratch
            .insert(
                &mut StagedNodeStore::new(&db, t.clone(), &mut lost),
                leaf(99),
                "fact 99",
            )
            .unwrap();
        drop(lost);
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let store = EngineNodeStore::new(&db, t.clone(), Durability::SyncData);
    let tree = MemTree::open(&store, tree_id).unwrap();
    assert_eq!(tree.len(), 40);
    let leaves = tree
        .range(&store, TimeRange::new(i64::MIN, i64::MAX).unwrap())
        .unwrap();
    assert_eq!(leaves.len(), 40);
    for l in &leaves {
        let id = l.key.payload.id;
        let fact = db
            .get(&t, Table::Facts.into(), &id.to_be_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(&fact[..], l.text.as_bytes());
    }
    assert_eq!(
        db.get(&t, Table::Facts.into(), &99u64.to_be_bytes())
            .unwrap(),
        None
    );
    let other = TenantId::new("other").unwrap();
    assert!(MemTree::open(
        &EngineNodeStore::new(&db, other, Durability::Buffered),
        tree_id
    )
    .is_err());
}

/// The summary scheduler reads trees at a snapshot while ingest rewrites them: every page
/// must come from the same state, even once the rewrite is flushed to a segment.
#[test]
fn a_snapshot_store_sees_a_tree_whole_while_it_is_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::new("agent").unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let mut live = EngineNodeStore::new(&db, t.clone(), Durability::Buffered);
    let config = TreeConfig::uniform(4).unwrap();
    let mut tree =
        MemTree::create(&mut live, TreeId(5), TreeKind::Entity, "user", &config).unwrap();
    for i in 0..20u64 {
        tree.insert(&mut live, leaf(i), &format!("fact {i}"))
            .unwrap();
    }
    let before = tree.clone();
    let snapshot = db.snapshot();
    // Late leaves land inside the tree: splits rewrite pages on every level, the root too.
    for i in 20..200u64 {
        let at = (i % 20) as i64 * 10 + 1;
        let key = LeafKey {
            time: TimeRange::new(at, at + 2).unwrap(),
            payload: Payload::fact(i),
        };
        tree.insert(&mut live, key, &format!("late {i}")).unwrap();
    }
    db.flush().unwrap();

    let mut pages = SnapshotNodeStore::new(&db, &t, &snapshot);
    let shape = before.verify(&pages).unwrap();
    assert_eq!(shape.items, 20);
    let texts: Vec<String> = before
        .range(&pages, TimeRange::new(i64::MIN, i64::MAX).unwrap())
        .unwrap()
        .into_iter()
        .map(|l| l.text)
        .collect();
    assert_eq!(
        texts,
        (0..20).map(|i| format!("fact {i}")).collect::<Vec<_>>()
    );
    // The old handle against the live pages: the root it records was rewritten.
    assert!(matches!(
        before.verify(&live),
        Err(TreeError::ChecksumMismatch { .. })
    ));
    assert_eq!(tree.verify(&live).unwrap().items, 200);
    assert!(pages.apply(PageBatch::default()).is_err());
}
