//! Forget a fact, a turn, a session, a tenant: orphans go, shared facts stay, trees stay
//! well-formed (every leaf names a live fact that lists the tree, counts agree) and their
//! summaries are regenerated without the forgotten text.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use std::collections::{BTreeMap, BTreeSet};

use memforest::lifecycle::Forget;
use memforest::memory::record::{self, FactRecord, TreeRecord};
use memforest::recall::{index, Mode, Query};
use memforest::{schema::Table, EngineNodeStore, Memory};
use memforest_engine::{Durability, TenantId, WriteBatch};
use memforest_tree::{MemTree, NodeBody, NodeId, PayloadKind, TreeConfig, TreeId, TreeKind};
use recall_common::{options, session};

/// A query for the facts sharing a word with `q` (lexical: these cases count which facts
/// a forget left, and nearest neighbours by meaning would always return some).
fn words(q: &str) -> Query {
    Query {
        mode: Mode::Lexical,
        ..Query::new(q)
    }
}

fn rows<T: serde::de::DeserializeOwned>(db: &Memory, t: &TenantId, table: Table) -> Vec<(u64, T)> {
    db.db()
        .scan_prefix(t, table.into(), b"", None)
        .unwrap()
        .map(|r| {
            let (k, v) = r.unwrap();
            (
                record::be_u64(&k).unwrap(),
                record::decode(&v, "row").unwrap(),
            )
        })
        .collect()
}

/// Checks every tree against the facts and memberships; returns every leaf and summary
/// text of the fact trees (session trees hold raw turns, which a fact's forget keeps).
fn check_forest(db: &Memory, t: &TenantId) -> String {
    // The pages below are read one `get` at a time, not at one snapshot: let the summary
    // scheduler finish first, or a page it rewrites between two reads fails its parent's CRC.
    db.flush_summaries().unwrap();
    let facts: BTreeMap<u64, FactRecord> = rows(db, t, Table::Facts).into_iter().collect();
    let mut members: BTreeSet<(u64, u64)> = BTreeSet::new();
    for kv in db
        .db()
        .scan_prefix(t, Table::Memberships.into(), b"", None)
        .unwrap()
    {
        let (k, _) = kv.unwrap();
        members.insert((
            record::be_u64(&k).unwrap(),
            record::be_u64(&k[8..]).unwrap(),
        ));
    }
    let store = EngineNodeStore::new(db.db(), t.clone(), Durability::Buffered);
    let mut text = String::new();
    let mut leaf_members = BTreeSet::new();
    for (id, rec) in rows::<TreeRecord>(db, t, Table::Trees) {
        let facts_tree = rec.kind != TreeKind::Session.as_u8();
        let tree = MemTree::open(&store, TreeId(id)).unwrap();
        assert!(!tree.is_empty(), "an empty tree {id} was kept");
        let mut leaves = 0;
        let mut stack: Vec<NodeId> = tree.meta().root.map(|r| r.id).into_iter().collect();
        while let Some(n) = stack.pop() {
            let node = tree.node(&store, n).unwrap();
            if let Some(s) = &node.summary {
                if facts_tree {
                    text.push_str(&s.text);
                    text.push('\n');
                }
                if !node.dirty {
                    let input = tree.summary_input(&store, n).unwrap();
                    assert_eq!(s.input_hash, input.hash, "stale clean summary");
                }
            }
            match &node.body {
                NodeBody::Leaves(l) => {
                    for e in l {
                        leaves += 1;
                        if facts_tree {
                            text.push_str(&e.text);
                            text.push('\n');
                        }
                        if e.key.payload.kind == PayloadKind::Fact {
                            let f = e.key.payload.id;
                            assert!(facts.contains_key(&f), "leaf of a removed fact");
                            assert!(members.contains(&(f, id)), "leaf without membership");
                            leaf_members.insert((f, id));
                        }
                    }
                }
                NodeBody::Children(c) => stack.extend(c.iter().map(|c| c.id)),
            }
        }
        assert_eq!(leaves, tree.len(), "leaf count of tree {id}");
    }
    assert_eq!(leaf_members, members, "every membership has its leaf");
    text
}

#[test]
fn shared_fact_survives_one_source_and_goes_with_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    db.ingest_session(
        &t,
        &session("a", 0, &["my cat Tom is grey", "my dog Rex barks"]),
    )
    .unwrap();
    db.ingest_session(&t, &session("b", 1, &["My cat Tom is grey!"]))
        .unwrap();
    let cat = || db.query(&t, &words("grey cat")).unwrap();
    assert_eq!(cat().facts[0].provenance.len(), 2);

    let r = db
        .forget(
            &t,
            &Forget::Turn {
                session: "a".into(),
                index: 0,
            },
        )
        .unwrap();
    assert_eq!((r.turns, r.facts_removed, r.facts_updated), (1, 0, 1));
    let f = cat();
    assert_eq!(f.facts.len(), 1);
    assert_eq!(f.facts[0].provenance.len(), 1);
    assert_eq!(f.facts[0].provenance[0].session, "b");
    check_forest(&db, &t);

    let r = db.forget(&t, &Forget::Session("b".into())).unwrap();
    assert_eq!(r.facts_removed, 1);
    assert!(cat().facts.is_empty());
    assert_eq!(
        cat().recent_session.as_deref(),
        Some("a"),
        "STM moves to the latest left"
    );
    let rex = db.query(&t, &words("dog barks")).unwrap();
    assert_eq!(rex.facts.len(), 1);
    db.flush_summaries().unwrap();
    let text = check_forest(&db, &t);
    assert!(!text.contains("Tom"), "{text}");
    assert!(text.contains("Rex"));
}

#[test]
fn forgetting_facts_rebalances_trees_and_regenerates_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(true, None);
    opts.memory.trees = TreeConfig::uniform(4).unwrap();
    let db = Memory::open_with(dir.path(), opts).unwrap();
    let t = TenantId::new("t").unwrap();
    for s in 0..10 {
        let texts: Vec<String> = (0..6)
            .map(|i| format!("note {s} {i} about walrus{s}x{i}"))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        db.ingest_session(&t, &session(&format!("s{s}"), s, &refs))
            .unwrap();
    }
    db.flush_summaries().unwrap();
    check_forest(&db, &t);
    let facts: Vec<(u64, FactRecord)> = rows(&db, &t, Table::Facts);
    assert_eq!(facts.len(), 60);
    for (id, rec) in facts.iter().step_by(2) {
        let r = db.forget(&t, &Forget::Fact(*id)).unwrap();
        assert_eq!(r.facts_removed, 1);
        assert!(r.leaves_removed >= 1);
        let word = rec.text.split(' ').next_back().unwrap();
        let q = db.query(&t, &words(word)).unwrap();
        assert!(q.facts.iter().all(|f| f.id != *id), "{word} still returned");
    }
    db.flush_summaries().unwrap();
    let text = check_forest(&db, &t);
    for (i, (_, rec)) in facts.iter().enumerate() {
        let word = rec.text.split(' ').next_back().unwrap();
        assert_eq!(text.contains(&format!(" {word}\n")), i % 2 == 1, "{word}");
    }
    // The raw turns stay: forgetting a fact is not forgetting what was said.
    assert_eq!(
        db.db()
            .scan_prefix(&t, Table::Turns.into(), b"", None)
            .unwrap()
            .count(),
        60
    );
}

#[test]
fn forgetting_a_tenant_leaves_the_other_intact() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let a = TenantId::new("a").unwrap();
    let b = TenantId::new("b").unwrap();
    for t in [&a, &b] {
        db.ingest_session(t, &session("s", 0, &["Rex the dog chased a ball"]))
            .unwrap();
    }
    db.query(&a, &words("dog")).unwrap();
    db.forget(&a, &Forget::Tenant).unwrap();
    let q = db.query(&a, &words("dog ball Rex")).unwrap();
    assert!(q.facts.is_empty() && q.recent_turns.is_empty());
    assert_eq!(db.db().scan_tenant(&a, None).unwrap().count(), 0);
    assert_eq!(db.query(&b, &words("dog")).unwrap().facts.len(), 1);
    db.ingest_session(&a, &session("s2", 1, &["Rex is back"]))
        .unwrap();
    assert_eq!(db.query(&a, &words("Rex")).unwrap().facts.len(), 1);
}

/// The ids of the facts whose text contains `word`.
fn facts_with(db: &Memory, t: &TenantId, word: &str) -> Vec<u64> {
    rows::<FactRecord>(db, t, Table::Facts)
        .into_iter()
        .filter(|(_, f)| f.text.contains(word))
        .map(|(id, _)| id)
        .collect()
}

#[test]
fn forgetting_a_session_reads_only_the_facts_it_sourced() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    db.ingest_session(&t, &session("a", 0, &["Tom plays the oboe", "Ada paints"]))
        .unwrap();
    db.ingest_session(&t, &session("b", 1, &["tom plays the oboe!", "Kim sings"]))
        .unwrap();
    db.ingest_session(&t, &session("c", 2, &["Lou rows boats"]))
        .unwrap();
    // Session c's fact becomes unreadable: a forget that looked at it would fail.
    let [lou] = facts_with(&db, &t, "Lou")[..] else {
        panic!("one Lou fact")
    };
    db.db()
        .put(
            &t,
            Table::Facts.into(),
            &lou.to_be_bytes(),
            b"\xff",
            Durability::Buffered,
        )
        .unwrap();

    let r = db.forget(&t, &Forget::Session("a".into())).unwrap();
    assert_eq!((r.facts_removed, r.facts_updated), (1, 1), "{r:?}");
    assert!(db.query(&t, &words("Ada paints")).unwrap().facts.is_empty());
    let oboe = db.query(&t, &words("oboe")).unwrap();
    assert_eq!(oboe.facts.len(), 1);
    let sessions: Vec<&str> = oboe.facts[0]
        .provenance
        .iter()
        .map(|p| p.session.as_str())
        .collect();
    assert_eq!(sessions, ["b"], "the merged fact keeps only b's occurrence");

    // b's occurrence of the merged fact was indexed when it merged: forgetting b removes it.
    let r = db.forget(&t, &Forget::Session("b".into())).unwrap();
    assert_eq!((r.facts_removed, r.facts_updated), (2, 0), "{r:?}");
    assert!(db.query(&t, &words("oboe")).unwrap().facts.is_empty());
    assert!(facts_with_raw(&db, &t).contains(&lou), "c's fact untouched");
}

/// Every fact id, without decoding the records.
fn facts_with_raw(db: &Memory, t: &TenantId) -> Vec<u64> {
    db.db()
        .scan_prefix(t, Table::Facts.into(), b"", None)
        .unwrap()
        .map(|r| record::be_u64(&r.unwrap().0).unwrap())
        .collect()
}

#[test]
fn forgetting_a_session_backfills_an_index_written_before_occurrences() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    db.ingest_session(&t, &session("a", 0, &["Tom plays the oboe", "Ada paints"]))
        .unwrap();
    db.ingest_session(&t, &session("b", 1, &["tom plays the oboe!", "Kim sings"]))
        .unwrap();
    // What a store indexed before the occurrence index looks like: no entries, no marker.
    let mut batch = WriteBatch::new();
    batch.delete(&t, Table::Postings.into(), index::OCCURRENCES_COMPLETE_KEY);
    for kv in db
        .db()
        .scan_prefix(
            &t,
            Table::Postings.into(),
            &[index::OCCURRENCE_PREFIX],
            None,
        )
        .unwrap()
    {
        batch.delete(&t, Table::Postings.into(), &kv.unwrap().0);
    }
    assert!(batch.len() > 4, "occurrence entries were written");
    db.db().write(&batch, Durability::Buffered).unwrap();

    let r = db.forget(&t, &Forget::Session("a".into())).unwrap();
    assert_eq!((r.facts_removed, r.facts_updated), (1, 1), "{r:?}");
    let r = db.forget(&t, &Forget::Session("b".into())).unwrap();
    assert_eq!((r.facts_removed, r.facts_updated), (2, 0), "{r:?}");
    assert!(facts_with_raw(&db, &t).is_empty());
    check_forest(&db, &t);
}

/// Several forgets in one batch each see what the ones before staged: forgetting the
/// latest session and the one before it leaves the third as the recent conversation (a
/// rescan of the stored sessions alone named the other one just forgotten).
#[test]
fn forgetting_two_sessions_in_one_batch_leaves_the_third_as_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    for (id, day, text) in [
        ("c", 0, "I bought a red kite at the fair."),
        ("a", 1, "We planted tulips in the garden."),
        ("b", 2, "My cat Tom is grey and sleepy."),
    ] {
        db.ingest_session(&t, &session(id, day, &[text])).unwrap();
    }
    let report = db
        .forget_all(
            &t,
            &[Forget::Session("a".into()), Forget::Session("b".into())],
        )
        .unwrap();
    assert_eq!(report.turns, 2, "{report:?}");
    let result = db.query(&t, &words("kite")).unwrap();
    assert_eq!(result.recent_session.as_deref(), Some("c"), "{result:?}");
    assert_eq!(result.recent_turns.len(), 1);
    db.close().unwrap();
}
