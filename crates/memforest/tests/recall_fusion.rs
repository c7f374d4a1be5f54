//! The final ranking of `Memory::query` (`recall::fuse`) with the default heuristic extractor
//! (one fact per sentence): a turn whose sentences together match the question beats
//! turns matching one word in one shorter sentence; a turn next to the one that asks
//! (in its cell or in the cell before) is lifted by it, and the ranking of a warm process
//! after its session grows is a fresh one's; a "when" question prefers the dated sentence.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::recall::{Query, QueryResult};
use memforest::Memory;
use memforest_engine::TenantId;
use recall_common::{options, session};

/// Ingests one session per entry (each entry: the session's turn texts).
fn store(sessions: &[&[&str]]) -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    for (i, texts) in sessions.iter().enumerate() {
        let day = i64::try_from(i).unwrap();
        db.ingest_session(&t, &session(&format!("s{i}"), day, texts))
            .unwrap();
    }
    (dir, db, t)
}

/// The distinct source turns of the result, in order of first appearance.
fn turns(r: &QueryResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &r.facts {
        for p in &f.provenance {
            for t in &p.turns {
                if !out.contains(t) {
                    out.push(t.clone());
                }
            }
        }
    }
    out
}

fn rank(r: &QueryResult, turn: &str) -> usize {
    turns(r)
        .iter()
        .position(|t| t == turn)
        .unwrap_or_else(|| panic!("{turn} not returned: {:?}", turns(r)))
}

#[test]
fn sentences_of_one_turn_are_scored_together() {
    let (_dir, db, t) = store(&[
        &["My habit of walking daily helps."],
        &["Big changes at work this week."],
        &[
            "Nah, there were no real changes for me over the whole month. \
             Still enjoying my soda and candy, although I know it is a bad habit.",
        ],
        &["Habit trackers are popular apps."],
        &["Changes to the bus timetable again."],
    ]);
    let r = db
        .query(&t, &Query::new("What habit is she trying to change?"))
        .unwrap();
    assert_eq!(turns(&r).first().map(String::as_str), Some("s2#turn_0"));
}

/// The turn that asks does not end with a question mark, so no reply is brought
/// (`recall::reply`): only its neighbour score lifts the answer. Cells hold two turns (the
/// default): the answer is in the asking turn's cell, then in the next cell.
#[test]
fn the_turn_after_a_matching_request_is_lifted_by_it() {
    const ASKS: &str = "Tell me why your friends signed the basketball for you.";
    const ANSWER: &str = "It shows our friendship, my teammates were so kind about it all season.";
    for (turns_of_s0, answer) in [
        (&[ASKS, ANSWER][..], "s0#turn_1"),
        (
            &[
                "Good morning, how was your weekend?",
                ASKS,
                ANSWER,
                "See you.",
            ][..],
            "s0#turn_2",
        ),
    ] {
        let (_dir, db, t) = store(&[turns_of_s0, &["My teammates played well tonight."]]);
        let r = db
            .query(
                &t,
                &Query::new("Why did the teammates sign the basketball?"),
            )
            .unwrap();
        assert!(rank(&r, answer) < rank(&r, "s1#turn_0"), "{:?}", turns(&r));
    }
}

/// The ids and scores of `question`'s result.
fn ranking(db: &Memory, t: &TenantId, question: &str) -> Vec<(u64, f32)> {
    let r = db.query(t, &Query::new(question)).unwrap();
    r.facts.iter().map(|f| (f.id, f.score)).collect()
}

/// A warm process ranks as a fresh one after a session grows: the last cell read before
/// the growth had no turn after it yet, and its cached turns must not hide the new one.
#[test]
fn a_session_that_grows_ranks_as_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::new("t").unwrap();
    let first: &[&str] = &[
        "Good morning, how was your weekend?",
        "Did your friends sign the basketball for a special reason?",
    ];
    let all: &[&str] = &[
        first[0],
        first[1],
        "It shows our friendship, my teammates were so kind about it all season.",
        "See you at practice.",
    ];
    let question = "Why did the friends sign the basketball for the teammates?";
    let warm = {
        let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
        db.ingest_session(&t, &session("s0", 0, first)).unwrap();
        db.ingest_session(
            &t,
            &session("s1", 1, &["My teammates played well tonight."]),
        )
        .unwrap();
        let before = ranking(&db, &t, question);
        db.ingest_session(&t, &session("s0", 0, all)).unwrap();
        let warm = ranking(&db, &t, question);
        assert_ne!(before, warm, "the new turns change the ranking");
        warm
    };
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    assert_eq!(ranking(&db, &t, question), warm);
}

#[test]
fn a_when_question_prefers_the_dated_sentence() {
    let sessions: &[&[&str]] = &[
        &["The pottery class was fun."],
        &["We joined the pottery class last week."],
    ];
    let (_dir, db, t) = store(sessions);
    let when = db
        .query(&t, &Query::new("When was the pottery class?"))
        .unwrap();
    assert_eq!(turns(&when).first().map(String::as_str), Some("s1#turn_0"));
    // Without temporal intent the shorter sentence ranks first.
    let what = db
        .query(&t, &Query::new("What was the pottery class like?"))
        .unwrap();
    assert_eq!(turns(&what).first().map(String::as_str), Some("s0#turn_0"));
}
