//! Replies (`recall::reply`): a fact from a turn that asks a question brings the facts of
//! the next turn of its session, which often shares no word with the question; an
//! assistant's reply only when the question asks what the assistant said; a forgotten
//! reply is gone and the turn after it is no reply; updates are no conversation; an index
//! written before the cell entries is backfilled, and read-only handles work meanwhile.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::lifecycle::Forget;
use memforest::memory::session::{Role, Session, Turn};
use memforest::recall::index::{CELLS_COMPLETE_KEY, CELL_FACT_PREFIX};
use memforest::recall::{Query, QueryResult};
use memforest::schema::Table;
use memforest::{AddOptions, Memory, Message};
use memforest_engine::{Durability, TenantId, WriteBatch};
use recall_common::{options, rows, session, T0};

const ASKED: &str = "How do you feel about starting this mentoring journey?";
const REPLY: &str = "I'm so excited and inspired, it's a great chance to help them grow.";
const QUESTION: &str = "How does Alice feel about the mentoring journey?";

/// The question and its reply in different cells (cells hold two turns): turns 1 and 2.
const ACROSS: [&str; 4] = [
    "Good morning to you both.",
    ASKED,
    REPLY,
    "Talk to you soon then.",
];
/// The question and its reply in one cell: turns 2 and 3, then an unrelated turn.
const WITHIN: [&str; 6] = [
    "Good morning to you both.",
    "The weather is lovely today.",
    ASKED,
    REPLY,
    "My sister's name is Zoe.",
    "Talk to you soon then.",
];

/// Session `s0` of `texts`, turn `i` said by `roles[i]` (a user when missing), and an
/// unrelated session `s1`.
fn store(texts: &[&str], roles: &[Role]) -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    let turns = texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let role = roles.get(i).copied().unwrap_or(Role::User);
            let speaker = if role == Role::User { "Alice" } else { "Bot" };
            Turn {
                time: Some(T0 + i as i64 * 60_000_000),
                ..Turn::new(role, speaker, *text)
            }
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

/// The turn found right after the asking turn `asking`.
fn after(db: &Memory, t: &TenantId, question: &str, asking: &str) -> Option<String> {
    let found = ask(db, t, question);
    let at = found.iter().position(|x| x == asking);
    found
        .get(at.unwrap_or_else(|| panic!("{asking} not in {found:?}")) + 1)
        .cloned()
}

#[test]
fn the_reply_to_a_question_follows_it() {
    for (texts, asking, reply) in [
        (&ACROSS[..], "s0#turn_1", "s0#turn_2"),
        (&WITHIN[..], "s0#turn_2", "s0#turn_3"),
    ] {
        let (_dir, db, t) = store(texts, &[]);
        assert_eq!(after(&db, &t, QUESTION, asking).as_deref(), Some(reply));
        // The reply alone shares no word with the question; it ranks at its question's score.
        let r = db.query(&t, &Query::new(QUESTION)).unwrap();
        let replied = r.facts.iter().find(|f| f.text.contains("excited")).unwrap();
        let asked = r.facts.iter().find(|f| f.text.contains("journey")).unwrap();
        assert_eq!(replied.score, asked.score);
    }
}

#[test]
fn an_assistant_reply_follows_only_a_question_about_the_assistant() {
    let roles = [Role::User, Role::User, Role::Assistant, Role::User];
    let (_dir, db, t) = store(&ACROSS, &roles);
    let next = after(&db, &t, QUESTION, "s0#turn_1");
    assert_ne!(next.as_deref(), Some("s0#turn_2"));
    let about = "Can you remind me what you said about the mentoring journey?";
    let next = after(&db, &t, about, "s0#turn_1");
    assert_eq!(next.as_deref(), Some("s0#turn_2"));
}

#[test]
fn a_forgotten_reply_is_not_brought_nor_the_turn_after_it() {
    let (dir, db, t) = store(&WITHIN, &[]);
    let forget = Forget::Turn {
        session: "s0".into(),
        index: 3,
    };
    db.forget(&t, &forget).unwrap();
    let found = ask(&db, &t, QUESTION);
    assert!(!found.contains(&"s0#turn_3".to_owned()), "{found:?}");
    let next = after(&db, &t, QUESTION, "s0#turn_2");
    assert_ne!(next.as_deref(), Some("s0#turn_4"), "{found:?}");
    drop(db);
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    assert_eq!(ask(&db, &t, QUESTION), found);
}

#[test]
fn updates_of_unrelated_memories_are_no_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let wait = AddOptions {
        wait: true,
        ..AddOptions::default()
    };
    let mut ids = Vec::new();
    for (session, text) in [
        ("a", "I want to renew my passport."),
        ("b", "My PIN hint is my dog."),
    ] {
        let added = db.add_with("u", session, &[Message::user(text)], &wait);
        ids.push(added.unwrap().memories[0]);
    }
    let asked = "Should I renew my passport this year?";
    db.update("u", ids[0], asked).unwrap();
    db.update("u", ids[1], "My PIN hint is my cat Whiskers.")
        .unwrap();
    let t = TenantId::new("u").unwrap();
    let r = db
        .query(&t, &Query::new("Should I renew my passport?"))
        .unwrap();
    let at = r
        .facts
        .iter()
        .position(|f| f.text.ends_with(asked))
        .unwrap();
    let next = r.facts.get(at + 1).map(|f| f.text.as_str());
    assert!(!next.unwrap_or("").contains("Whiskers"), "{next:?}");
}

#[test]
fn an_index_without_cell_entries_is_backfilled_and_read_only_until_then() {
    let (dir, db, t) = store(&ACROSS, &[]);
    let current = ask(&db, &t, QUESTION);
    // Make it an index written before the cell index.
    let mut b = WriteBatch::new();
    let entries = rows(&db, &t, Table::Postings, &[CELL_FACT_PREFIX]);
    assert!(!entries.is_empty());
    for kv in &entries {
        b.delete(&t, Table::Postings.into(), &kv.0);
    }
    b.delete(&t, Table::Postings.into(), CELLS_COMPLETE_KEY);
    db.db().write(&b, Durability::SyncData).unwrap();
    drop(db);
    let ro = Memory::open_read_only(dir.path(), options(false, None)).unwrap();
    let next = after(&ro, &t, QUESTION, "s0#turn_1");
    assert_ne!(
        next.as_deref(),
        Some("s0#turn_2"),
        "no reply without the cell index"
    );
    drop(ro);
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    assert_eq!(ask(&db, &t, QUESTION), current);
    let complete = db.db().get(&t, Table::Postings.into(), CELLS_COMPLETE_KEY);
    assert!(complete.unwrap().is_some());
    let cells = rows(&db, &t, Table::Postings, &[CELL_FACT_PREFIX]);
    assert_eq!(cells.len(), entries.len(), "cell entries backfilled");
}
