//! A lexical query without a time filter answers from the postings alone (`recall::search`,
//! step 3): it must return exactly what the browse would. The same questions are asked
//! with and without a time filter that covers all time (which makes the query browse every
//! recalled tree); the facts and scores must be identical, and every tree the browse
//! reached a fact through must also be reported without it (which reports every recalled
//! tree holding the fact). Queries run at a snapshot older than the latest write, so none
//! records heat and both sides recall the same trees.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest_engine::recall::{Query, QueryResult};
use memforest_engine::TenantId;
use memforest_tree::TimeRange;
use recall_common::{ingest, questions, ranking, store, WORDS};

#[test]
fn lexical_query_without_time_filter_answers_like_the_browse() {
    let (_dir, db, t) = store(16, 6);
    let snap = db.snapshot();
    ingest(&db, &TenantId::new("other").unwrap(), 0..1, 1);
    let mut asked = questions();
    asked.extend(WORDS.iter().map(|w| format!("Where was the {w}?")));
    let mut through = 0;
    for q in &asked {
        let ask = |time_range: Option<TimeRange>, beam: usize| -> QueryResult {
            let query = Query {
                snapshot: Some(snap.seqno()),
                time_range,
                beam,
                ..Query::new(q.as_str())
            };
            db.query(&t, &query).unwrap()
        };
        let all = Some(TimeRange {
            start: i64::MIN,
            end: i64::MAX,
        });
        for beam in [1, 10] {
            let (postings, browsed) = (ask(None, beam), ask(all, beam));
            assert!(!postings.facts.is_empty(), "{q}: finds facts");
            assert_eq!(ranking(&postings), ranking(&browsed), "{q}, beam {beam}");
            for (p, b) in postings.facts.iter().zip(&browsed.facts) {
                assert!(
                    b.trees.iter().all(|tree| p.trees.contains(tree)),
                    "{q}, beam {beam}: fact {} browsed through {:?}, reported through {:?}",
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
