//! The speaker is a field, not a word of the fact: a question that names a speaker prefers
//! that speaker's facts among those sharing its other words, and does not find every fact
//! the speaker said (`recall::index::speaker_term`, `recall::accumulate`).
#![allow(clippy::unwrap_used, reason = "test code")]

use memforest::recall::{Mode, Query};
use memforest::{Memory, Message};
use memforest_engine::TenantId;

/// The facts a lexical query returns, best first (lexical: nearest neighbours by meaning
/// would return every fact of a small store).
fn texts(mem: &Memory, question: &str) -> Vec<String> {
    let q = Query {
        mode: Mode::Lexical,
        ..Query::new(question)
    };
    let t = TenantId::new("home").unwrap();
    mem.query(&t, &q)
        .unwrap()
        .facts
        .into_iter()
        .map(|f| f.text)
        .collect()
}

fn store() -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add(
        "home",
        "s1",
        &[
            Message::user("I hike up the steep trails of the Alps every summer.").by("Alice"),
            Message::user("I adopted a grey cat from the shelter.").by("Alice"),
            Message::user("I hike in Norway.").by("Bob"),
        ],
    )
    .unwrap();
    (dir, mem)
}

#[test]
fn a_question_naming_a_speaker_prefers_their_facts_and_finds_no_other() {
    let (_dir, mem) = store();
    let found = texts(&mem, "Where does Alice hike?");
    // Bob's shorter sentence scores higher on `hike` alone; Alice's name lifts hers.
    assert_eq!(
        found,
        [
            "Alice: I hike up the steep trails of the Alps every summer.",
            "Bob: I hike in Norway.",
        ],
    );
    // Alice's cat shares only her name with the question.
    assert!(texts(&mem, "What did Alice say?").is_empty());
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
