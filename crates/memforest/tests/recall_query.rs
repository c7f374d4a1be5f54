//! Read path: read-your-writes with no summaries, tenant isolation across query, context
//! and profile, knowledge updates, and time-range / snapshot queries against a model.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use std::collections::BTreeSet;
use std::sync::Arc;

use memforest::memory::record::{self, FactRecord};
use memforest::memory::MemoryError;
use memforest::recall::{Query, QueryResult};
use memforest::{schema::Table, Memory};
use memforest_engine::TenantId;
use memforest_tree::TimeRange;
use recall_common::{options, session, NeverSummarizer, DAY, T0};

fn facts_of(db: &Memory, t: &TenantId) -> Vec<(u64, FactRecord)> {
    db.db()
        .scan_prefix(t, Table::Facts.into(), b"", None)
        .unwrap()
        .map(|r| {
            let (k, v) = r.unwrap();
            (
                record::be_u64(&k).unwrap(),
                record::decode(&v, "fact").unwrap(),
            )
        })
        .collect()
}

fn texts(r: &QueryResult) -> Vec<&str> {
    r.facts.iter().map(|f| f.text.as_str()).collect()
}

#[test]
fn fact_is_returned_right_after_ingest_with_no_summary() {
    let dir = tempfile::tempdir().unwrap();
    let db =
        Memory::open_with(dir.path(), options(false, Some(Arc::new(NeverSummarizer)))).unwrap();
    let t = TenantId::new("t").unwrap();
    for i in 0..30 {
        let s = session(
            &format!("s{i}"),
            i,
            &[&format!(
                "I went bowling with my cousin number {i} on the weekend."
            )],
        );
        db.ingest_session(&t, &s).unwrap();
    }
    let s = session(
        "last",
        40,
        &["I adopted a grey kitten called Marmalade yesterday."],
    );
    db.ingest_session(&t, &s).unwrap();
    assert!(
        db.memory_stats().dirty_by_level.iter().sum::<u64>() > 0,
        "summaries must not have been computed"
    );
    let r = db
        .query(&t, &Query::new("What is the kitten called?"))
        .unwrap();
    let first = r.facts.first().expect("the new fact must be found");
    assert!(first.text.contains("Marmalade"), "{:?}", texts(&r));
    assert_eq!(first.provenance[0].session, "last");
    assert!(!first.trees.is_empty(), "found through at least one tree");
    let ctx = r.context();
    assert!(ctx.contains("Marmalade"));
    assert!(ctx.contains("Recent turns (session last)"));
}

#[test]
fn tenants_never_see_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let a = TenantId::new("alpha").unwrap();
    let b = TenantId::new("beta").unwrap();
    let mk = |tag: &str, day| {
        session(
            &format!("trip-{tag}"),
            day,
            &[
                &format!("Melanie and I visited Paris with Caroline, we ate {tag} croissants."),
                &format!("Caroline moved to Berlin and bought a {tag} bicycle."),
                &format!("Melanie painted a {tag} sunset over the Seine in Paris."),
            ],
        )
    };
    for d in 0..3 {
        db.ingest_session(&a, &mk("almond", d)).unwrap();
        db.ingest_session(&b, &mk("blueberry", d)).unwrap();
    }
    db.flush_summaries().unwrap();
    for (me, other_word) in [(&a, "blueberry"), (&b, "almond")] {
        let mine: BTreeSet<u64> = facts_of(&db, me).into_iter().map(|f| f.0).collect();
        for q in [
            "Paris Caroline Melanie",
            "What did Caroline buy in Berlin?",
            other_word,
            "croissants sunset bicycle",
        ] {
            let r = db.query(me, &Query::new(q)).unwrap();
            for f in &r.facts {
                assert!(mine.contains(&f.id), "{q}: foreign fact {}", f.text);
            }
            assert!(!r.context().contains(other_word), "{q}: {}", r.context());
        }
        let p = db.profile(&me.to_string()).unwrap();
        let all = format!("{p:?}");
        assert!(!all.contains(other_word), "profile leaks: {all}");
    }
    let r = db.query(&a, &Query::new("croissants")).unwrap();
    assert!(!r.facts.is_empty());
}

#[test]
fn latest_only_keeps_the_newest_version_and_history_keeps_both() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    db.ingest_session(
        &t,
        &session("a", 0, &["Alice lives in Lisbon||Alice|home city"]),
    )
    .unwrap();
    db.ingest_session(
        &t,
        &session("b", 5, &["Alice lives in Oslo now||Alice|home city"]),
    )
    .unwrap();
    db.ingest_session(&t, &session("c", 6, &["Bob lives in Lima||Bob|home city"]))
        .unwrap();
    let q = Query::new("where does Alice live");
    let all = db.query(&t, &q).unwrap();
    let lisbon = all
        .facts
        .iter()
        .find(|f| f.text.contains("Lisbon"))
        .unwrap();
    let oslo = all.facts.iter().find(|f| f.text.contains("Oslo")).unwrap();
    assert!(!lisbon.current);
    assert_eq!(lisbon.valid_until, Some(T0 + 5 * DAY));
    assert!(oslo.current && oslo.valid_until.is_none());
    let bob = all.facts.iter().find(|f| f.text.contains("Lima")).unwrap();
    assert!(bob.current, "another entity's slot does not supersede");
    let latest = db
        .query(
            &t,
            &Query {
                latest_only: true,
                ..q
            },
        )
        .unwrap();
    assert!(texts(&latest).iter().all(|t| !t.contains("Lisbon")));
    assert!(texts(&latest).iter().any(|t| t.contains("Oslo")));
    assert!(
        all.context().contains("(until 2023-03-06 00:00)"),
        "{}",
        all.context()
    );
}

/// Model: every fact with its event time and the seqno after which it exists.
#[test]
fn time_range_and_snapshot_queries_match_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    let mut model: Vec<(String, i64, u64)> = Vec::new();
    let mut snaps = Vec::new();
    for day in 0..12i64 {
        let texts: Vec<String> = (0..3)
            .map(|i| format!("garden note {day}-{i}: planted tomato row {}", day * 3 + i))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        db.ingest_session(&t, &session(&format!("d{day}"), day, &refs))
            .unwrap();
        let snap = db.snapshot();
        for (i, text) in texts.iter().enumerate() {
            model.push((
                text.clone(),
                T0 + day * DAY + i as i64 * 60_000_000,
                snap.seqno(),
            ));
        }
        snaps.push(snap);
    }
    let ask = |q: Query| -> BTreeSet<String> {
        db.query(&t, &q)
            .unwrap()
            .facts
            .into_iter()
            .map(|f| f.text)
            .collect()
    };
    let base = Query {
        k: 100,
        ..Query::new("planted tomato garden")
    };
    for (lo, hi) in [(0, 0), (2, 5), (7, 11), (11, 30), (20, 30)] {
        let tr = TimeRange::new(T0 + lo * DAY, T0 + hi * DAY + DAY - 1).unwrap();
        let want: BTreeSet<String> = model
            .iter()
            .filter(|m| m.1 >= tr.start && m.1 <= tr.end)
            .map(|m| m.0.clone())
            .collect();
        let got = ask(Query {
            time_range: Some(tr),
            ..base.clone()
        });
        assert_eq!(got, want, "range {lo}..={hi}");
    }
    for snap in &snaps {
        let want: BTreeSet<String> = model
            .iter()
            .filter(|m| m.2 <= snap.seqno())
            .map(|m| m.0.clone())
            .collect();
        let got = ask(Query {
            snapshot: Some(snap.seqno()),
            ..base.clone()
        });
        assert_eq!(got, want, "snapshot {}", snap.seqno());
    }
}

#[test]
fn cached_postings_never_hide_a_new_fact_or_serve_a_forgotten_one() {
    use memforest::lifecycle::Forget;
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    let oboe = |db: &Memory| {
        let mut v: Vec<String> = db
            .query(&t, &Query::new("oboe"))
            .unwrap()
            .facts
            .into_iter()
            .map(|f| f.text)
            .collect();
        v.sort();
        v
    };
    db.ingest_session(&t, &session("a", 0, &["Tom plays the oboe"]))
        .unwrap();
    assert_eq!(oboe(&db), ["Tom plays the oboe"]);
    let before = db.snapshot();
    db.ingest_session(&t, &session("b", 1, &["Ada tunes an oboe"]))
        .unwrap();
    assert_eq!(oboe(&db), ["Ada tunes an oboe", "Tom plays the oboe"]);
    let old = Query {
        snapshot: Some(before.seqno()),
        ..Query::new("oboe")
    };
    assert_eq!(
        db.query(&t, &old).unwrap().facts.len(),
        1,
        "snapshots bypass it"
    );
    db.forget(&t, &Forget::Session("a".into())).unwrap();
    assert_eq!(oboe(&db), ["Ada tunes an oboe"]);
    db.forget(&t, &Forget::Tenant).unwrap();
    assert!(oboe(&db).is_empty());
}

/// A query as of a seqno reads only while a snapshot at that seqno is held: once it is
/// dropped, flushes and compactions may drop the versions such a read needs, so the query
/// fails with a typed error instead of answering from a partial state.
#[test]
fn a_query_at_a_seqno_nobody_holds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    db.ingest_session(&t, &session("a", 0, &["Tom plays the oboe"]))
        .unwrap();
    let snap = db.snapshot();
    let seqno = snap.seqno();
    db.ingest_session(&t, &session("b", 1, &["Ada tunes an oboe"]))
        .unwrap();
    let at = Query {
        snapshot: Some(seqno),
        ..Query::new("oboe")
    };
    assert_eq!(db.query(&t, &at).unwrap().facts.len(), 1);
    // The scheduler reads at snapshots of its own while anything is dirty; once nothing
    // is, none of them can be at `seqno` any more.
    db.flush_summaries().unwrap();
    drop(snap);
    let err = db.query(&t, &at).unwrap_err();
    assert!(
        matches!(err, MemoryError::SnapshotNotHeld { seqno: s } if s == seqno),
        "{err}"
    );
    // A seqno past the latest names no state: refused too.
    let ahead = Query {
        snapshot: Some(u64::MAX),
        ..Query::new("oboe")
    };
    let err = db.query(&t, &ahead).unwrap_err();
    assert!(
        matches!(err, MemoryError::SnapshotNotHeld { seqno: u64::MAX }),
        "{err}"
    );
}
