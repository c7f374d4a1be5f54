//! The summary cache (`recall::summaries`: node summaries' term counts keyed by page CRC)
//! and the browse that reads only the beam's pages change no ranking: after the trees are
//! rewritten (sessions with new facts ingested, summaries regenerated, so pages keep their ids but
//! get new CRCs), a `Db` whose caches were filled from the old pages ranks exactly like the
//! same store reopened with empty caches. Queries run at a snapshot older than the latest
//! write (to another tenant), so no query records tree heat and both sides rank with the
//! same (zero) heat; beam 2 makes the browse prune children by their summaries.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest_engine::recall::Query;
use memforest_engine::{Db, TenantId};
use recall_common::{ingest, options, questions, ranking, session, store, text, WORDS};

/// Every question at a snapshot of the current state, taken before a write to another
/// tenant (so the snapshot is not the latest state and records no heat).
fn at_snapshot(db: &Db, t: &TenantId, write: usize) -> Vec<Vec<(u64, u32)>> {
    let snap = db.snapshot();
    let other = TenantId::new("other").unwrap();
    ingest(db, &other, write..write + 1, 1);
    questions()
        .iter()
        .map(|q| {
            let query = Query {
                snapshot: Some(snap.seqno()),
                beam: 2,
                ..Query::new(q.as_str())
            };
            ranking(&db.query(t, &query).unwrap())
        })
        .collect()
}

#[test]
fn summaries_cached_from_rewritten_pages_rank_like_empty_caches() {
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
    let db = Db::open(dir.path(), options(false, None)).unwrap();
    let cold = at_snapshot(&db, &t, 2);
    assert!(
        cold.iter().all(|r| !r.is_empty()),
        "every question finds facts"
    );
    for ((q, c), w) in questions().iter().zip(&cold).zip(&warm) {
        assert_eq!(w, c, "{q}");
    }
}
