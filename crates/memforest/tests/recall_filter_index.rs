//! Session and speaker filters that few facts pass: the query lists the facts they admit
//! from the index (`recall::scope`) instead of loading facts until enough pass, and must
//! return exactly the facts the filter admits. Oracle: with `k` above the tenant's facts,
//! a filtered query returns every admitted fact the unfiltered query returns.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use std::collections::{BTreeSet, HashSet};

use memforest::memory::session::{Role, Session, Turn};
use memforest::recall::Query;
use memforest::Memory;
use memforest_engine::TenantId;
use recall_common::{options, text, DAY, T0};

/// Sessions in the store; each holds less than an eighth of the facts.
const SESSIONS: usize = 40;
/// Turns per session.
const TURNS: usize = 10;
/// Speakers, taken in turn: each says less than an eighth of the facts, and so does each
/// name word two of them share ("Mary" of Mary Ann and Mary Lou).
const SPEAKERS: [&str; 24] = [
    "Mary Ann", "Mary Lou", "Ann Lee", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo",
    "Kit", "Lu", "Max", "Ned", "Oz", "Pat", "Quin", "Ray", "Sal", "Ted", "Uma", "Vic",
];
/// Said in session 3 and again in the last session: one fact with two occurrences.
const REPEATED: &str = "Mary Ann keeps a lantern by the river for the night walks.";

fn store() -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    for s in 0..SESSIONS {
        let day = i64::try_from(s).unwrap();
        let mut turns: Vec<Turn> = (0..TURNS)
            .map(|i| Turn {
                time: Some(T0 + day * DAY + i64::try_from(i).unwrap() * 60_000_000),
                ..Turn::new(
                    Role::User,
                    SPEAKERS[(s * TURNS + i) % SPEAKERS.len()],
                    text(s, i),
                )
            })
            .collect();
        if s == 3 || s == SESSIONS - 1 {
            turns.push(Turn {
                time: Some(T0 + day * DAY + 3_600_000_000),
                ..Turn::new(Role::User, "Mary Ann", REPEATED)
            });
        }
        let session = Session {
            id: format!("s{s}"),
            start: T0 + day * DAY,
            turns,
        };
        db.ingest_session(&t, &session).unwrap();
    }
    db.flush_summaries().unwrap();
    (dir, db, t)
}

/// `(fact id, text, sessions)` of every fact `q` returns.
fn run(db: &Memory, t: &TenantId, q: &Query) -> Vec<(u64, String, BTreeSet<String>)> {
    db.query(t, q)
        .unwrap()
        .facts
        .into_iter()
        .map(|f| {
            let sessions = f.provenance.iter().map(|p| p.session.clone()).collect();
            (f.id, f.text, sessions)
        })
        .collect()
}

fn everything(question: &str) -> Query {
    Query {
        k: 10_000,
        ..Query::new(question)
    }
}

const QUESTIONS: [&str; 3] = [
    "What about the river and the lantern?",
    "Where was the garden today?",
    "What did we talk about again?",
];

#[test]
fn a_session_filter_returns_every_fact_of_that_session() {
    let (_d, db, t) = store();
    for question in QUESTIONS {
        let all = run(&db, &t, &everything(question));
        for session in ["s3", "s17", "s39"] {
            let mut q = everything(question);
            q.sessions = Some(BTreeSet::from([session.to_owned()]));
            let got: HashSet<u64> = run(&db, &t, &q).iter().map(|f| f.0).collect();
            let want: HashSet<u64> = all
                .iter()
                .filter(|f| f.2.contains(session))
                .map(|f| f.0)
                .collect();
            assert!(!want.is_empty(), "{question} in {session}");
            assert_eq!(got, want, "{question} in {session}");
        }
    }
    // The repeated sentence is one fact, found from either session it was said in.
    for session in ["s3", "s39"] {
        let mut q = Query::new("Who keeps a lantern by the river?");
        q.sessions = Some(BTreeSet::from([session.to_owned()]));
        let got = run(&db, &t, &q);
        assert!(
            got.iter().any(|f| f.1.contains(REPEATED)),
            "{session}: {got:?}"
        );
    }
}

#[test]
fn a_speaker_filter_returns_every_fact_of_that_speaker_and_no_namesake() {
    let (_d, db, t) = store();
    for question in QUESTIONS {
        let all = run(&db, &t, &everything(question));
        for speaker in ["mary ann", "Ann Lee", "Bo"] {
            let prefix = format!("{}: ", speaker.to_ascii_lowercase());
            let mut q = everything(question);
            q.speaker = Some(speaker.to_owned());
            let got: HashSet<u64> = run(&db, &t, &q).iter().map(|f| f.0).collect();
            let want: HashSet<u64> = all
                .iter()
                .filter(|f| f.1.to_ascii_lowercase().starts_with(&prefix))
                .map(|f| f.0)
                .collect();
            assert!(!want.is_empty(), "{question} by {speaker}");
            assert_eq!(got, want, "{question} by {speaker}");
        }
    }
}

#[test]
fn session_and_speaker_filters_together_return_the_facts_both_admit() {
    let (_d, db, t) = store();
    for question in QUESTIONS {
        let all = run(&db, &t, &everything(question));
        let sessions = BTreeSet::from(["s3".to_owned(), "s20".to_owned(), "s39".to_owned()]);
        let mut q = everything(question);
        q.sessions = Some(sessions.clone());
        q.speaker = Some("Mary Ann".into());
        let got: HashSet<u64> = run(&db, &t, &q).iter().map(|f| f.0).collect();
        let want: HashSet<u64> = all
            .iter()
            .filter(|f| f.1.starts_with("Mary Ann: ") && !f.2.is_disjoint(&sessions))
            .map(|f| f.0)
            .collect();
        assert!(!want.is_empty(), "{question}");
        assert_eq!(got, want, "{question}");
    }
}

#[test]
fn a_filtered_query_puts_the_admitted_fact_sharing_most_words_first() {
    // With `k` below what the filter admits, the filtered query's best facts are the
    // admitted facts that share the most with the question: here the only one naming the
    // lantern.
    let (_d, db, t) = store();
    let mut q = Query::new("Who keeps a lantern by the river?");
    q.k = 3;
    q.sessions = Some(BTreeSet::from(["s39".to_owned()]));
    q.speaker = Some("Mary Ann".into());
    let got = run(&db, &t, &q);
    assert!(
        got.first().is_some_and(|f| f.1.contains(REPEATED)),
        "{got:?}"
    );
}
