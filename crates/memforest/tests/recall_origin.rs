//! Whose words rank first: the user's own statements are the memory, so an assistant's
//! tips that share more words with a question rank after the user's answer to it, unless
//! the question asks what the assistant said. An assistant's words do not lift the user's
//! turns next to them past the assistant's own turn that answers.
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

/// A role-play: the user prompts in a few words, the assistant narrates. The one reply that
/// names the jumpsuit's designation answers; the user's prompts next to the assistant's
/// replies share only the question's common words.
#[test]
fn the_assistants_answer_ranks_before_the_user_turns_its_words_lift() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let at = Utc.with_ymd_and_hms(2024, 5, 2, 9, 0, 0).unwrap();
    let turns = [
        Message::user("You wake up in a white room with a door and a desk."),
        Message::assistant("I get up slowly and walk over to the desk."),
        Message::user("There is a note on the desk about an old file."),
        Message::assistant(
            "I look down at my jumpsuit and see the designation LIV printed on it in red.",
        ),
        Message::user("A voice says the file is down the hall."),
        Message::assistant("I open the door and step into the hallway."),
        Message::user("The hallway is long and quiet, with doors on both sides."),
        Message::assistant("I walk to the end of the hallway and try the last door."),
        Message::user("Behind the door, a clerk sorts papers into a file box."),
        Message::assistant("I wait quietly by the wall and watch the clerk."),
        Message::user("The clerk leaves a file on the counter and goes out."),
        Message::assistant("I step closer to the counter and listen for footsteps."),
        Message::user("Someone left a file open on the chair."),
        Message::assistant("I glance at the clock above the counter."),
    ];
    let turns: Vec<Message> = turns.into_iter().map(|m| m.at(at)).collect();
    mem.add("alice", "s1", &turns).unwrap();
    let found = mem
        .search(
            "alice",
            "What was the red designation on my jumpsuit that helped me find the file?",
            &SearchOptions::default(),
        )
        .unwrap();
    let rank = found
        .iter()
        .position(|m| m.text.contains("designation LIV"));
    assert_eq!(
        rank,
        Some(0),
        "{:#?}",
        found.iter().map(|m| &m.text).collect::<Vec<_>>()
    );
    mem.close().unwrap();
}
