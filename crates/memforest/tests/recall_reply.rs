//! Replies (`recall::reply`): a fact from a turn that asks a question brings the facts of
//! the next turn of its session, which often shares no word with the question; an
//! assistant's reply only when the question asks what the assistant said; a forgotten
//! reply is gone; an index written before the cell entries is rebuilt with them.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::lifecycle::Forget;
use memforest::memory::session::{Role, Session, Turn};
use memforest::recall::index::{CELL_FACT_PREFIX, INDEX_VERSION, VERSION_KEY};
use memforest::recall::{Query, QueryResult};
use memforest::schema::Table;
use memforest::Memory;
use memforest_engine::{Durability, TenantId, WriteBatch};
use recall_common::{options, session, T0};

const ASKED: &str = "How do you feel about starting this mentoring journey?";
const REPLY: &str = "I'm so excited and inspired, it's a great chance to help them grow.";

/// One session `s0`: a greeting, the question, its reply, a goodbye (cells of two turns,
/// so the question and the reply are in different cells), said by `roles`.
fn store(roles: [Role; 4]) -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    let texts = [
        "Good morning to you both.",
        ASKED,
        REPLY,
        "Talk to you soon then.",
    ];
    let turns = texts
        .iter()
        .zip(roles)
        .enumerate()
        .map(|(i, (text, role))| Turn {
            time: Some(T0 + i as i64 * 60_000_000),
            ..Turn::new(
                role,
                if role == Role::User { "Alice" } else { "Bot" },
                *text,
            )
        })
        .collect();
    let s = Session {
        id: "s0".into(),
        start: T0,
        turns,
    };
    db.ingest_session(&t, &s).unwrap();
    db.ingest_session(&t, &session("s1", 1, &["My mentoring plans are on hold."]))
        .unwrap();
    (dir, db, t)
}

/// The distinct source turns of the result, in order of first appearance.
fn turns(r: &QueryResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in r
        .facts
        .iter()
        .flat_map(|f| &f.provenance)
        .flat_map(|p| &p.turns)
    {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

fn ask(db: &Memory, t: &TenantId, question: &str) -> Vec<String> {
    turns(&db.query(t, &Query::new(question)).unwrap())
}

const QUESTION: &str = "How does Alice feel about the mentoring journey?";

#[test]
fn the_reply_to_a_question_follows_it() {
    let (_dir, db, t) = store([Role::User; 4]);
    assert_eq!(
        after_the_question(&db, &t, QUESTION),
        Some("s0#turn_2".to_owned())
    );
    // The reply alone shares no word with the question.
    let r = db.query(&t, &Query::new(QUESTION)).unwrap();
    let reply = r.facts.iter().find(|f| f.text.contains("excited")).unwrap();
    let asking = r.facts.iter().find(|f| f.text.contains("journey")).unwrap();
    assert_eq!(
        reply.score, asking.score,
        "a reply ranks at its question's score"
    );
}

#[test]
fn an_assistant_reply_follows_only_a_question_about_the_assistant() {
    let (_dir, db, t) = store([Role::User, Role::User, Role::Assistant, Role::User]);
    assert_ne!(
        after_the_question(&db, &t, QUESTION),
        Some("s0#turn_2".to_owned())
    );
    let about = "Can you remind me what you said about the mentoring journey?";
    assert_eq!(
        after_the_question(&db, &t, about),
        Some("s0#turn_2".to_owned())
    );
}

/// The turn found right after the asking turn `s0#turn_1`.
fn after_the_question(db: &Memory, t: &TenantId, question: &str) -> Option<String> {
    let found = ask(db, t, question);
    let asked = found.iter().position(|x| x == "s0#turn_1").unwrap();
    found.get(asked + 1).cloned()
}

#[test]
fn a_forgotten_reply_is_not_brought() {
    let (dir, db, t) = store([Role::User; 4]);
    db.forget(
        &t,
        &Forget::Turn {
            session: "s0".into(),
            index: 2,
        },
    )
    .unwrap();
    let found = ask(&db, &t, QUESTION);
    assert!(found.contains(&"s0#turn_1".to_owned()), "{found:?}");
    assert!(!found.contains(&"s0#turn_2".to_owned()), "{found:?}");
    drop(db);
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    assert_eq!(ask(&db, &t, QUESTION), found);
}

#[test]
fn an_index_without_cell_entries_is_rebuilt_with_them() {
    let (_dir, db, t) = store([Role::User; 4]);
    let current = ask(&db, &t, QUESTION);
    // Make it the version-3 index: no cell entries.
    let mut b = WriteBatch::new();
    let entries = db
        .db()
        .scan_prefix(&t, Table::Postings.into(), &[CELL_FACT_PREFIX], None)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let entries_len = entries.len();
    assert!(entries_len > 0);
    for kv in entries {
        b.delete(&t, Table::Postings.into(), &kv.0);
    }
    b.put(&t, Table::Postings.into(), VERSION_KEY, &3u32.to_le_bytes());
    db.db().write(&b, Durability::SyncData).unwrap();
    assert_eq!(ask(&db, &t, QUESTION), current);
    let version = db
        .db()
        .get(&t, Table::Postings.into(), VERSION_KEY)
        .unwrap();
    assert_eq!(version.as_deref(), Some(&INDEX_VERSION.to_le_bytes()[..]));
    let cells = db
        .db()
        .scan_prefix(&t, Table::Postings.into(), &[CELL_FACT_PREFIX], None)
        .unwrap();
    assert_eq!(cells.count(), entries_len, "cell entries rebuilt");
}
