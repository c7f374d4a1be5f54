//! Whose words rank first: the user's own statements are the memory, so an assistant's
//! tips that share more words with a question rank after the user's answer to it, unless
//! the question asks what the assistant said.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use chrono::{TimeZone, Utc};
use memforest::{Memory, Message, SearchOptions};

fn store() -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let at = Utc.with_ymd_and_hms(2024, 5, 2, 9, 0, 0).unwrap();
    mem.add(
        "alice",
        "s1",
        &[
            Message::user("I need to return two jackets and pick up one dress from the tailor.")
                .by("Alice")
                .at(at),
            Message::assistant(
                "Here are some tips to return clothing: keep the receipt for the clothing, \
                 return clothing within the store's return window, and pick up clothing \
                 you had altered when the tailor calls.",
            )
            .at(at),
        ],
    )
    .unwrap();
    (dir, mem)
}

fn first(mem: &Memory, question: &str) -> String {
    mem.search("alice", question, &SearchOptions::default())
        .unwrap()[0]
        .text
        .clone()
}

#[test]
fn the_users_statement_ranks_before_the_assistants_tips() {
    let (_dir, mem) = store();
    let top = first(
        &mem,
        "How many items of clothing do I need to pick up or return?",
    );
    assert!(top.contains("two jackets"), "{top}");
    mem.close().unwrap();
}

#[test]
fn a_question_about_what_the_assistant_said_finds_its_words() {
    let (_dir, mem) = store();
    let top = first(
        &mem,
        "Can you remind me what you suggested about returning clothing?",
    );
    assert!(top.starts_with("assistant:"), "{top}");
    mem.close().unwrap();
}
