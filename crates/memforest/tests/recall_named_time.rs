//! A calendar day or month the question names with its year ("in August 2023", "on 18
//! August, 2023"): the facts said then join the candidates and, when they share a word
//! with the question, rank higher (`recall::intent`'s named times, `fuse::NAMED_TIME_BONUS`),
//! in one ranking with the others; facts of that time found only by vector do not crowd
//! out the answers of other times, and a sentence said before and after that time was not
//! said then.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::recall::{Query, QueryResult};
use memforest::Memory;
use memforest_engine::TenantId;
use recall_common::{options, session};

/// What answers the injury question: said on 2023-08-18, sharing one word with it, where
/// sixty facts of March share it twice in fewer words.
const ANKLE: &str = "I twisted my ankle badly on the trail last Friday, a small injury.";

/// Unrelated things said on 2023-08-18.
const AUGUST: [&str; 8] = [
    "The weather was hot and dry.",
    "We grilled corn in the garden.",
    "The new bakery sells rye bread.",
    "I finished the puzzle with a thousand pieces.",
    "The train to the coast was late again.",
    "My neighbour repainted the fence green.",
    "The library extended its opening hours.",
    "I bought a blue kettle for the office.",
];

/// Sixty injuries, a sister (her name and three more things about her) and a brother in
/// March 2023 (day 0 is 2023-03-01), the
/// ankle and [`AUGUST`] in August 2023, a cinema sentence said in March and again in
/// December, and a cinema outing in August.
fn store() -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    let mut march: Vec<String> = (0..60)
        .map(|i| format!("Tom had injury number {i} at the gym, a bad injury."))
        .collect();
    march.push("My sister is called Nadia and she lives in Porto.".into());
    march.push("My brother's name is Pedro.".into());
    for hobby in [
        "likes green tea",
        "plays chess on Sundays",
        "has two cats at home",
    ] {
        march.push(format!("My sister {hobby} and always has."));
    }
    march.push("I love going to the cinema with friends.".into());
    let march: Vec<&str> = march.iter().map(String::as_str).collect();
    db.ingest_session(&t, &session("march", 0, &march)).unwrap();
    let mut august = vec![ANKLE, "We saw a documentary about bees at the cinema."];
    august.extend(AUGUST);
    db.ingest_session(&t, &session("august", 170, &august))
        .unwrap();
    let december = ["I love going to the cinema with friends."];
    db.ingest_session(&t, &session("december", 280, &december))
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

fn rank(r: &QueryResult, needle: &str) -> Option<usize> {
    r.facts.iter().position(|f| f.text.contains(needle))
}

#[test]
fn the_named_time_finds_and_lifts_what_was_said_then() {
    let (_dir, db, t) = store();
    let plain = ask(&db, &t, "What injury did Alice have?", 3);
    assert_eq!(rank(&plain, "ankle"), None, "{:?}", texts(&plain));
    let dated = ask(&db, &t, "What injury did Alice have in August 2023?", 3);
    assert_eq!(rank(&dated, "ankle"), Some(0), "{:?}", texts(&dated));
}

#[test]
fn facts_of_the_named_time_found_only_by_vector_do_not_crowd_out_answers() {
    let (_dir, db, t) = store();
    let r = ask(
        &db,
        &t,
        "What is my sister's name? I called her on 18 August, 2023.",
        6,
    );
    assert_eq!(rank(&r, "Nadia"), Some(0), "{:?}", texts(&r));
    for other in AUGUST {
        assert_eq!(rank(&r, other), None, "{other}: {:?}", texts(&r));
    }
    assert!(
        r.facts.windows(2).all(|w| w[0].score >= w[1].score),
        "one ranking: {:?}",
        r.facts.iter().map(|f| f.score).collect::<Vec<_>>()
    );
}

#[test]
fn a_sentence_said_before_and_after_the_named_time_was_not_said_then() {
    let (_dir, db, t) = store();
    let r = ask(&db, &t, "Which film at the cinema in August 2023?", 2);
    assert_eq!(rank(&r, "bees"), Some(0), "{:?}", texts(&r));
}

#[test]
fn chat_words_of_time_name_no_time() {
    let (_dir, db, t) = store();
    let chat = ask(
        &db,
        &t,
        "What is my sister's name? I want to call her tonight, this week.",
        3,
    );
    assert_eq!(rank(&chat, "Nadia"), Some(0), "{:?}", texts(&chat));
    for other in AUGUST {
        assert_eq!(rank(&chat, other), None, "{other}: {:?}", texts(&chat));
    }
}
