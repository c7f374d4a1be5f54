//! The summary cache (`recall::summaries`: node summaries' term counts keyed by page CRC)
//! and the browse that reads only the beam's pages change no answer: after the trees are
//! rewritten (sessions with new facts ingested, summaries regenerated, so pages keep their
//! ids but get new CRCs), a `Db` whose caches were filled from the old pages returns the
//! same facts, scores and trees reached as the same store reopened with empty caches.
//! Queries run at a snapshot older than the latest write (to another tenant), so no query
//! records tree heat and both sides rank with the same (zero) heat; beam 1 makes the
//! browse prune trees and children by their summaries, and a time filter covering all time
//! makes every query browse (a lexical query without one answers from the postings alone).
//! (Serving summaries by node id alone, without the CRC, fails this test: stale summaries
//! send the browse elsewhere.)
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::recall::Query;
use memforest::Memory;
use memforest_engine::TenantId;
use recall_common::{ingest, options, questions, ranking, session, store, text, ALL_TIME, WORDS};

/// A query's ranking (see [`ranking`]) and the trees each fact was reached through (the
/// browse decides these).
type Answer = (Vec<(u64, u32)>, Vec<Vec<String>>);

/// The shared questions and some about the words only the later sessions bring.
fn asked() -> Vec<String> {
    let mut q = questions();
    q.extend(
        WORDS
            .iter()
            .map(|w| format!("Which lantern was by the {w}?")),
    );
    q
}

/// Every question at a snapshot of the current state, taken before a write to another
/// tenant (so the snapshot is not the latest state and records no heat).
fn at_snapshot(db: &Memory, t: &TenantId, write: usize) -> Vec<Answer> {
    let snap = db.snapshot();
    let other = TenantId::new("other").unwrap();
    ingest(db, &other, write..write + 1, 1);
    asked()
        .iter()
        .map(|q| {
            let query = Query {
                snapshot: Some(snap.seqno()),
                beam: 1,
                time_range: Some(ALL_TIME),
                ..Query::new(q.as_str())
            };
            let r = db.query(t, &query).unwrap();
            (ranking(&r), r.facts.into_iter().map(|f| f.trees).collect())
        })
        .collect()
}

#[test]
fn summaries_cached_from_rewritten_pages_answer_like_empty_caches() {
    let (dir, db, t) = store(6, 6);
    let old = at_snapshot(&db, &t, 0);
    for s in 6..12 {
        let texts: Vec<String> = (0..6)
            .map(|i| format!("{} The lantern {s} was by the {}.", text(s, i), WORDS[i]))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let day = i64::try_from(s).unwrap();
        db.ingest_session(&t, &session(&format!("s{s}"), day, &refs))
            .unwrap();
    }
    db.flush_summaries().unwrap();
    let warm = at_snapshot(&db, &t, 1);
    assert_ne!(old, warm, "the new sessions change some ranking");
    drop(db);
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let cold = at_snapshot(&db, &t, 2);
    assert!(
        cold.iter().all(|r| !r.0.is_empty()),
        "every question finds facts"
    );
    for ((q, c), w) in asked().iter().zip(&cold).zip(&warm) {
        assert_eq!(w, c, "{q}");
    }
}
