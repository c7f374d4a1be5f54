//! Session, speaker and time filters that few facts pass: the query lists the facts they
//! admit from the index (`recall::scope`) instead of loading facts until enough pass, and
//! must return exactly the facts the filter admits. Oracle: with `k` above the tenant's
//! facts, a filtered query returns every admitted fact the unfiltered query returns. An
//! index written before the long-span entries is answered without them, and backfilled.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use std::collections::{BTreeSet, HashSet};

use memforest::memory::session::{Role, Session, Turn};
use memforest::recall::index::{SPANS_COMPLETE_KEY, SPAN_PREFIX};
use memforest::recall::{Mode, Query};
use memforest::schema::Table;
use memforest::Memory;
use memforest_engine::{Durability, TenantId, WriteBatch};
use memforest_tree::TimeRange;
use recall_common::{options, rows, text, DAY, T0};

/// Sessions in the store, session `s` on day `10 * s`: each holds less than an eighth of
/// the facts, and so do the sessions of any 17 days.
const SESSIONS: usize = 80;
/// Turns per session.
const TURNS: usize = 5;
/// Speakers, taken in turn: each says less than an eighth of the facts, and so does each
/// name word two of them share ("Mary" of Mary Ann and Mary Lou).
const SPEAKERS: [&str; 40] = [
    "Mary Ann", "Mary Lou", "Ann Lee", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo",
    "Kit", "Lu", "Max", "Ned", "Oz", "Pat", "Quin", "Ray", "Sal", "Ted", "Uma", "Vic", "Wes",
    "Xia", "Yul", "Zed", "Abe", "Bea", "Cal", "Dot", "Eve", "Fay", "Gil", "Hue", "Ian", "Jan",
    "Kay", "Lew",
];
/// Said in session 3 and again in the last session, 760 days later: one fact with two
/// occurrences whose time spans them, so for a time filter near the end only its
/// long-span entry lists it.
const REPEATED: &str = "Mary Ann keeps a lantern by the river for the night walks.";
/// Said in the last session (2025), about the year before: a fact whose time is 2024.
const LISBON: &str = "Last year I lived in Lisbon near the old tram line.";

fn store() -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    for s in 0..SESSIONS {
        let day = 10 * i64::try_from(s).unwrap();
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
        let late = |text| Turn {
            time: Some(T0 + day * DAY + 3_600_000_000),
            ..Turn::new(Role::User, "Mary Ann", text)
        };
        if s == 3 || s == SESSIONS - 1 {
            turns.push(late(REPEATED));
        }
        if s == SESSIONS - 1 {
            turns.push(late(LISBON));
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

/// A fact as a query returns it: id, text, sessions, time.
type Found = (u64, String, BTreeSet<String>, TimeRange);

/// Every fact `q` returns.
fn run(db: &Memory, t: &TenantId, q: &Query) -> Vec<Found> {
    db.query(t, q)
        .unwrap()
        .facts
        .into_iter()
        .map(|f| {
            let sessions = f.provenance.iter().map(|p| p.session.clone()).collect();
            (f.id, f.text, sessions, f.time)
        })
        .collect()
}

/// The ids of the facts of `found` that `keep` keeps.
fn ids(found: &[Found], keep: impl Fn(&Found) -> bool) -> HashSet<u64> {
    found.iter().filter(|f| keep(f)).map(|f| f.0).collect()
}

/// Asserts that `q` returns the fact containing `text` among its first `within`.
fn assert_finds(db: &Memory, t: &TenantId, q: &Query, text: &str, within: usize) {
    let got = run(db, t, q);
    let at = got.iter().position(|f| f.1.contains(text));
    assert!(at.is_some_and(|i| i < within), "{q:?}: {got:?}");
}

fn everything(question: &str) -> Query {
    Query {
        k: 10_000,
        ..Query::new(question)
    }
}

const QUESTIONS: [&str; 4] = [
    "What about the river and the lantern?",
    "Where was the garden today?",
    "What did we talk about again?",
    "Where did I live, near the tram?",
];

/// Checks, for each question, that `filter` applied to the query returns exactly the facts
/// of the unfiltered query that `admits` keeps; returns how many it returned in all.
fn check(
    db: &Memory,
    t: &TenantId,
    filter: impl Fn(&mut Query),
    admits: impl Fn(&Found) -> bool,
) -> usize {
    let mut found = 0;
    for question in QUESTIONS {
        let all = run(db, t, &everything(question));
        let mut q = everything(question);
        filter(&mut q);
        let got = ids(&run(db, t, &q), |_| true);
        assert_eq!(got, ids(&all, &admits), "{question}, {q:?}");
        found += got.len();
    }
    found
}

#[test]
fn a_session_filter_returns_every_fact_of_that_session() {
    let (_d, db, t) = store();
    for session in ["s3", "s17", "s79"] {
        let found = check(
            &db,
            &t,
            |q| q.sessions = Some(BTreeSet::from([session.to_owned()])),
            |f| f.2.contains(session),
        );
        assert!(found > 0, "{session}");
    }
    // The repeated sentence is one fact, found from either session it was said in.
    for session in ["s3", "s79"] {
        let mut q = Query::new("Who keeps a lantern by the river?");
        q.sessions = Some(BTreeSet::from([session.to_owned()]));
        assert_finds(&db, &t, &q, REPEATED, q.k);
    }
}

#[test]
fn a_speaker_filter_returns_every_fact_of_that_speaker_and_no_namesake() {
    let (_d, db, t) = store();
    for speaker in ["mary ann", "Ann Lee", "Bo"] {
        let prefix = format!("{}: ", speaker.to_ascii_lowercase());
        let found = check(
            &db,
            &t,
            |q| q.speaker = Some(speaker.to_owned()),
            |f| f.1.to_ascii_lowercase().starts_with(&prefix),
        );
        assert!(found > 0, "{speaker}");
    }
}

/// A day near the end (only the long-span entry lists [`REPEATED`]), two days with
/// sessions in the middle, a day of 2024 without one (only the long-span entries list
/// [`LISBON`] and [`REPEATED`]), everything until the middle (not listed: tested one by
/// one).
const RANGES: [TimeRange; 4] = [
    TimeRange {
        start: T0 + 785 * DAY,
        end: T0 + 786 * DAY,
    },
    TimeRange {
        start: T0 + 400 * DAY,
        end: T0 + 402 * DAY,
    },
    TimeRange {
        start: T0 + 472 * DAY,
        end: T0 + 473 * DAY,
    },
    TimeRange {
        start: i64::MIN,
        end: T0 + 400 * DAY,
    },
];

/// [`check`]s each of [`RANGES`]; returns how many facts they returned in all.
fn check_ranges(db: &Memory, t: &TenantId) -> usize {
    RANGES
        .iter()
        .map(|&range| {
            check(
                db,
                t,
                |q| q.time_range = Some(range),
                |f| range.overlaps(f.3),
            )
        })
        .sum()
}

#[test]
fn a_time_filter_returns_every_fact_of_that_time_long_spans_included() {
    let (_d, db, t) = store();
    assert!(check_ranges(&db, &t) > 0);
    for (range, question, text) in [
        (RANGES[0], "Who keeps a lantern by the river?", REPEATED),
        (RANGES[2], "Where did I live, near the tram?", LISBON),
    ] {
        let mut q = Query::new(question);
        q.time_range = Some(range);
        assert_finds(&db, &t, &q, text, q.k);
    }
}

#[test]
fn filters_together_return_the_facts_all_admit() {
    let (_d, db, t) = store();
    let sessions = BTreeSet::from(["s3".to_owned(), "s20".to_owned(), "s79".to_owned()]);
    let found = check(
        &db,
        &t,
        |q| {
            q.sessions = Some(sessions.clone());
            q.speaker = Some("Mary Ann".into());
            q.time_range = Some(TimeRange {
                start: T0 + 100 * DAY,
                end: T0 + 800 * DAY,
            });
        },
        |f| {
            f.1.starts_with("Mary Ann: ")
                && !f.2.is_disjoint(&sessions)
                && f.3.end >= T0 + 100 * DAY
        },
    );
    assert!(found > 0);
}

#[test]
fn a_listed_fact_scores_by_vector_as_in_the_unfiltered_query() {
    // The listed facts' vectors are scored as the scan of every vector scores them (the
    // query quantized alike): a filter changes which facts compete, not their scores.
    let (_d, db, t) = store();
    let question = "Where was the garden today?";
    let every = Query {
        mode: Mode::Embedding,
        ..everything(question)
    };
    let scores: std::collections::HashMap<u64, u32> = db
        .query(&t, &every)
        .unwrap()
        .facts
        .iter()
        .map(|f| (f.id, f.score.to_bits()))
        .collect();
    for filter in [
        |q: &mut Query| q.speaker = Some("Ann Lee".into()),
        |q: &mut Query| q.sessions = Some(BTreeSet::from(["s17".to_owned()])),
    ] {
        let mut q = Query {
            mode: Mode::Embedding,
            k: 1,
            beam: 1,
            ..Query::new(question)
        };
        filter(&mut q);
        let got = db.query(&t, &q).unwrap().facts;
        assert!(!got.is_empty());
        for f in got {
            assert_eq!(Some(&f.score.to_bits()), scores.get(&f.id), "{}", f.text);
        }
    }
}

#[test]
fn a_filtered_query_puts_the_admitted_fact_sharing_most_words_first() {
    // With `k` below what the filters admit, the best facts are the admitted facts that
    // share the most with the question: here the only one naming the lantern.
    let (_d, db, t) = store();
    let mut q = Query::new("Who keeps a lantern by the river?");
    q.k = 3;
    q.sessions = Some(BTreeSet::from(["s79".to_owned()]));
    q.speaker = Some("Mary Ann".into());
    assert_finds(&db, &t, &q, REPEATED, 1);
}

#[test]
fn an_index_without_long_span_entries_is_answered_and_backfilled() {
    let (dir, db, t) = store();
    let before = check_ranges(&db, &t);
    let spans = |db: &Memory| rows(db, &t, Table::Postings, &[SPAN_PREFIX]);
    let entries = spans(&db);
    assert!(entries.len() >= 2, "REPEATED and LISBON span long");
    // Make it an index written before the long-span entries.
    let mut b = WriteBatch::new();
    for kv in &entries {
        b.delete(&t, Table::Postings.into(), &kv.0);
    }
    b.delete(&t, Table::Postings.into(), SPANS_COMPLETE_KEY);
    db.db().write(&b, Durability::SyncData).unwrap();
    drop(db);
    // Read-only: nothing is backfilled, and the filter tests facts one by one.
    let ro = Memory::open_read_only(dir.path(), options(false, None)).unwrap();
    assert_eq!(check_ranges(&ro, &t), before);
    assert!(spans(&ro).is_empty());
    drop(ro);
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    assert_eq!(check_ranges(&db, &t), before);
    assert_eq!(spans(&db), entries, "long-span entries backfilled");
    let marker = db.db().get(&t, Table::Postings.into(), SPANS_COMPLETE_KEY);
    assert!(marker.unwrap().is_some());
}
