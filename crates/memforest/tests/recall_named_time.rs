//! A calendar time the question names ("in August 2023", "on 3 August, 2023"): the facts
//! of that time join the candidates and rank higher (`recall::intent`'s named time,
//! `fuse::NAMED_TIME_BONUS`), in one ranking with the others; they do not crowd out a
//! better answer from another time.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::recall::{Query, QueryResult};
use memforest::Memory;
use memforest_engine::TenantId;
use recall_common::{options, session};

/// What answers: said on 2023-08-18, with one word of the question.
const ANKLE: &str = "I twisted my ankle badly on the trail, a small injury really.";

/// Injuries and a sister in March 2023 (day 0 is 2023-03-01), then the ankle and a dozen
/// other things in August 2023.
fn store() -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    let march = [
        "Tom had an injury at the gym.",
        "The injury kept Tom off the field.",
        "Injury recovery takes patience, says Tom.",
        "My sister is called Nadia and she lives in Porto.",
    ];
    db.ingest_session(&t, &session("march", 0, &march)).unwrap();
    let august = [
        ANKLE,
        "The weather was hot and dry.",
        "We grilled corn in the garden.",
        "The new bakery sells rye bread.",
        "I finished the puzzle with a thousand pieces.",
        "The train to the coast was late again.",
        "My neighbour repainted the fence green.",
        "We watched a film about whales.",
        "The library extended its opening hours.",
        "I bought a blue kettle for the office.",
        "The farmers market moved to Saturdays.",
        "Our team won the quiz at the pub.",
    ];
    db.ingest_session(&t, &session("august", 170, &august))
        .unwrap();
    (dir, db, t)
}

fn ask(db: &Memory, t: &TenantId, question: &str, k: usize) -> QueryResult {
    let q = Query {
        k,
        ..Query::new(question)
    };
    db.query(t, &q).unwrap()
}

fn texts(r: &QueryResult) -> Vec<&str> {
    r.facts.iter().map(|f| f.text.as_str()).collect()
}

#[test]
fn the_named_time_lifts_what_was_said_then() {
    let (_dir, db, t) = store();
    let plain = ask(&db, &t, "What injury did I have?", 2);
    assert!(
        !texts(&plain).iter().any(|f| f.contains("ankle")),
        "{:?}",
        texts(&plain)
    );
    let dated = ask(&db, &t, "What injury did I have in August 2023?", 2);
    let found = texts(&dated);
    assert!(
        found.first().is_some_and(|f| f.contains("ankle")),
        "{found:?}"
    );
}

#[test]
fn the_named_time_does_not_crowd_out_a_better_answer() {
    let (_dir, db, t) = store();
    let r = ask(
        &db,
        &t,
        "What is my sister's name? I called her on 18 August, 2023.",
        5,
    );
    let found = texts(&r);
    assert!(
        found.first().is_some_and(|f| f.contains("Nadia")),
        "{found:?}"
    );
    assert!(
        r.facts.windows(2).all(|w| w[0].score >= w[1].score),
        "one ranking: {:?}",
        r.facts.iter().map(|f| f.score).collect::<Vec<_>>()
    );
}

#[test]
fn chat_words_of_time_name_no_time() {
    let (_dir, db, t) = store();
    let plain = ask(&db, &t, "What is my sister's name?", 3);
    let chat = ask(
        &db,
        &t,
        "What is my sister's name? I want to call her tonight, this week.",
        3,
    );
    assert_eq!(
        plain.facts.first().map(|f| f.id),
        chat.facts.first().map(|f| f.id)
    );
    assert!(texts(&chat).iter().all(|f| !f.contains("kettle")));
}
