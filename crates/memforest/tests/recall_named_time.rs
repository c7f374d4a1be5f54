//! A time the question names (`recall::named_time`): "in August 2023", "last week" put
//! the facts of that time first, and the others still follow; a time filter holds, the
//! named time first within it.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::recall::{Query, QueryResult};
use memforest::Memory;
use memforest_engine::TenantId;
use memforest_tree::TimeRange;
use recall_common::{options, session, DAY, T0};

/// What answers: said on 2023-08-18, with one word of the question.
const ANKLE: &str = "I twisted my ankle badly on the trail, a small injury really.";

/// Injuries talked about in March 2023, then the ankle in August 2023.
fn store() -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    let march = [
        "Tom had an injury at the gym.",
        "The injury kept Tom off the field.",
        "Injury recovery takes patience, says Tom.",
    ];
    db.ingest_session(&t, &session("march", 0, &march)).unwrap();
    let august = [ANKLE, "The weather was hot and dry."];
    db.ingest_session(&t, &session("august", 170, &august))
        .unwrap();
    (dir, db, t)
}

fn texts(r: &QueryResult) -> Vec<&str> {
    r.facts.iter().map(|f| f.text.as_str()).collect()
}

fn ask(db: &Memory, t: &TenantId, question: &str, k: usize) -> QueryResult {
    let q = Query {
        k,
        reference_time: Some(T0 + 200 * DAY),
        ..Query::new(question)
    };
    db.query(t, &q).unwrap()
}

#[test]
fn the_named_time_comes_first_and_the_rest_follows() {
    let (_dir, db, t) = store();
    let plain = ask(&db, &t, "What injury did I have?", 2);
    assert!(
        !texts(&plain).iter().any(|f| f.contains("ankle")),
        "{:?}",
        texts(&plain)
    );
    let dated = ask(&db, &t, "What injury did I have in August 2023?", 4);
    let found = texts(&dated);
    assert!(
        found.first().is_some_and(|f| f.contains("ankle")),
        "{found:?}"
    );
    assert!(found.iter().any(|f| f.contains("Tom")), "{found:?}");
    assert_eq!(found.iter().filter(|f| f.contains("ankle")).count(), 1);
}

#[test]
fn a_relative_time_resolves_against_the_reference_time() {
    let (_dir, db, t) = store();
    let q = Query {
        k: 2,
        reference_time: Some(T0 + 175 * DAY),
        ..Query::new("What injury did I have last week?")
    };
    let r = db.query(&t, &q).unwrap();
    assert!(
        r.facts.first().is_some_and(|f| f.text.contains("ankle")),
        "{:?}",
        texts(&r)
    );
}

#[test]
fn the_named_time_comes_first_within_a_time_filter() {
    let (_dir, db, t) = store();
    let q = Query {
        k: 4,
        time_range: Some(TimeRange {
            start: T0,
            end: T0 + 180 * DAY,
        }),
        ..Query::new("What injury did I have in August 2023?")
    };
    let r = db.query(&t, &q).unwrap();
    let found = texts(&r);
    assert!(
        found.first().is_some_and(|f| f.contains("ankle")),
        "{found:?}"
    );
    assert!(found.iter().any(|f| f.contains("Tom")), "{found:?}");
}

#[test]
fn a_time_filter_apart_from_the_named_time_holds() {
    let (_dir, db, t) = store();
    let q = Query {
        k: 4,
        time_range: Some(TimeRange {
            start: T0,
            end: T0 + 30 * DAY,
        }),
        ..Query::new("What injury did I have in August 2023?")
    };
    let r = db.query(&t, &q).unwrap();
    assert!(!r.facts.is_empty());
    assert!(
        r.facts.iter().all(|f| f.text.contains("Tom")),
        "{:?}",
        texts(&r)
    );
}
