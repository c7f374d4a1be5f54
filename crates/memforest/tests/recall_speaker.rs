//! The speaker is a field, not a word of the fact: a question that names a speaker prefers
//! that speaker's facts among those sharing its other words, and does not find every fact
//! the speaker said (`recall::index::speaker_term`, `recall::accumulate`), with or without
//! a time filter (which browses the trees, `recall::browse`).
#![allow(clippy::unwrap_used, reason = "test code")]

use memforest::recall::{Mode, Query};
use memforest::{Memory, Message, SearchOptions};
use memforest_engine::TenantId;
use memforest_tree::TimeRange;

/// The facts a lexical query returns, best first (lexical: nearest neighbours by meaning
/// would return every fact of a small store).
fn texts(mem: &Memory, question: &str) -> Vec<String> {
    query(
        mem,
        Query {
            mode: Mode::Lexical,
            ..Query::new(question)
        },
    )
}

/// The same over every time: a time filter makes the query browse the trees.
fn texts_any_time(mem: &Memory, question: &str) -> Vec<String> {
    query(
        mem,
        Query {
            mode: Mode::Lexical,
            time_range: Some(TimeRange {
                start: i64::MIN / 2,
                end: i64::MAX / 2,
            }),
            ..Query::new(question)
        },
    )
}

fn query(mem: &Memory, q: Query) -> Vec<String> {
    let t = TenantId::new("home").unwrap();
    mem.query(&t, &q)
        .unwrap()
        .facts
        .into_iter()
        .map(|f| f.text)
        .collect()
}

fn store() -> (tempfile::TempDir, Memory) {
    store_said_by("Alice")
}

/// Alice's two facts said by `alice` (her name, spaced as the caller gives it), Bob's one.
fn store_said_by(alice: &str) -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add(
        "home",
        "s1",
        &[
            Message::user("I hike up the steep trails of the Alps every summer.").by(alice),
            Message::user("I adopted a grey cat from the shelter.").by(alice),
            Message::user("I hike in Norway.").by("Bob"),
        ],
    )
    .unwrap();
    (dir, mem)
}

#[test]
fn a_question_naming_a_speaker_prefers_their_facts_and_finds_no_other() {
    for alice in ["Alice", " Alice"] {
        let (_dir, mem) = store_said_by(alice);
        for search in [texts, texts_any_time] {
            // Bob's shorter sentence scores higher on `hike` alone; Alice's name lifts hers.
            assert_eq!(
                search(&mem, "Where does Alice hike?"),
                [
                    "Alice: I hike up the steep trails of the Alps every summer.",
                    "Bob: I hike in Norway.",
                ],
                "{alice:?}"
            );
            // Alice's cat shares only her name with the question.
            assert!(search(&mem, "What did Alice say?").is_empty(), "{alice:?}");
        }
        mem.close().unwrap();
    }
}

#[test]
fn an_updated_memory_keeps_its_speaker() {
    let (_dir, mem) = store();
    let speaker = |name: &str| SearchOptions {
        speaker: Some(name.into()),
        ..SearchOptions::default()
    };
    let cat = mem
        .search("home", "grey cat", &speaker("Alice"))
        .unwrap()
        .into_iter()
        .find(|h| h.text.contains("cat"))
        .unwrap();
    mem.update(
        "home",
        cat.id,
        "Alice adopted a black cat from the shelter.",
    )
    .unwrap();
    let found = |name: &str| mem.search("home", "black cat", &speaker(name)).unwrap();
    assert!(found("Alice").iter().any(|h| h.text.contains("black cat")));
    assert!(found("update").is_empty());
    // "update" is no one's name: the word boosts no memory.
    assert_eq!(
        texts(&mem, "any update on the black cat?"),
        texts(&mem, "the black cat?")
    );
    mem.close().unwrap();
}

#[test]
fn the_name_inside_a_statement_is_still_a_word() {
    let (_dir, mem) = store();
    mem.add(
        "home",
        "s2",
        &[Message::user("Alice lent me her tent.").by("Bob")],
    )
    .unwrap();
    assert_eq!(texts(&mem, "Alice tent"), ["Bob: Alice lent me her tent."]);
    mem.close().unwrap();
}
