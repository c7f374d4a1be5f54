//! A query without a time filter answers from the postings and the fact vectors alone
//! (`recall::search`, step 4): lexical or hybrid, it must return exactly what the browse
//! would. The same questions are asked
//! with and without a time filter that covers all time (which makes the query browse every
//! recalled tree); the facts and scores must be identical, and every tree the browse
//! reached a fact through must also be reported without it (which reports every recalled
//! tree holding the fact). Every question matches far more facts than the candidate pool
//! (`k = 1, beam = 1`: 4 facts), so the browse reaches facts the postings' pool left out,
//! and the stores are asked with their summaries made and with every node still dirty.
//! Queries run at a snapshot older than the latest write, so none records heat and both
//! sides recall the same trees.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use std::sync::Arc;

use memforest::memory::summarize::Summarizer;
use memforest::recall::{Mode, Query, QueryResult};
use memforest::Memory;
use memforest_engine::TenantId;
use recall_common::{options, ranking, session, NeverSummarizer, ALL_TIME, WORDS};

/// 40 sessions of 6 distinct one-fact turns that all mention the lantern and two of
/// [`WORDS`] each.
fn store(summarizer: Option<Arc<dyn Summarizer>>) -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, summarizer)).unwrap();
    let t = TenantId::new("t").unwrap();
    for s in 0..40usize {
        let texts: Vec<String> = (0..6usize)
            .map(|i| {
                let (a, b) = (WORDS[(s + i) % 16], WORDS[(s * 3 + i * 5) % 16]);
                format!("The lantern number {s} {i} was by the {a} near the {b}.")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let day = i64::try_from(s).unwrap();
        db.ingest_session(&t, &session(&format!("s{s}"), day, &refs))
            .unwrap();
    }
    (dir, db, t)
}

fn compare(db: &Memory, t: &TenantId) {
    let snap = db.snapshot();
    let other = TenantId::new("other").unwrap();
    db.ingest_session(&other, &session("o", 0, &["A later write elsewhere."]))
        .unwrap();
    let mut through = 0;
    for w in WORDS {
        let q = format!("Where was the lantern by the {w}?");
        for (k, beam, mode) in [
            (1, 1, Mode::Lexical),
            (3, 2, Mode::Lexical),
            (10, 10, Mode::Lexical),
            (1, 1, Mode::Hybrid),
            (10, 10, Mode::Hybrid),
        ] {
            let ask = |time_range| -> QueryResult {
                let query = Query {
                    snapshot: Some(snap.seqno()),
                    time_range,
                    k,
                    beam,
                    mode,
                    ..Query::new(q.as_str())
                };
                db.query(t, &query).unwrap()
            };
            let (postings, browsed) = (ask(None), ask(Some(ALL_TIME)));
            assert_eq!(postings.facts.len(), k, "{q}: k facts");
            assert_eq!(
                ranking(&postings),
                ranking(&browsed),
                "{q}, k {k}, beam {beam}, {mode:?}"
            );
            for (p, b) in postings.facts.iter().zip(&browsed.facts) {
                assert!(
                    b.trees.iter().all(|tree| p.trees.contains(tree)),
                    "{q}: fact {} browsed through {:?}, reported through {:?}",
                    p.id,
                    b.trees,
                    p.trees
                );
                through += usize::from(!p.trees.is_empty());
            }
        }
    }
    assert!(through > 0, "facts are reported through recalled trees");
}

#[test]
fn a_query_without_time_filter_answers_like_the_browse() {
    let (_dir, db, t) = store(None);
    db.flush_summaries().unwrap();
    compare(&db, &t);
}

#[test]
fn a_query_without_time_filter_answers_like_the_browse_of_dirty_trees() {
    let (_dir, db, t) = store(Some(Arc::new(NeverSummarizer)));
    assert!(
        db.memory_stats().dirty_by_level.iter().sum::<u64>() > 0,
        "no summary may have been computed"
    );
    compare(&db, &t);
}
