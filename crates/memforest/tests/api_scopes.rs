//! The `Memory` API's scopes and time travel, through its public surface only: agent,
//! session and speaker scopes on add, search and list; metadata kept with messages (and forgotten with
//! them); searches as of a past time.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

#[path = "files_common/mod.rs"]
mod files_common;
#[path = "recall_common/mod.rs"]
mod recall_common;

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use memforest::{AddOptions, ListOptions, Memory, MemoryError, Message, SearchOptions};

fn date(month: u32, day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, month, day, 9, 0, 0).unwrap()
}

fn agent(name: &str) -> AddOptions {
    AddOptions {
        agent: Some(name.to_owned()),
        ..AddOptions::default()
    }
}

fn hit_texts(mem: &Memory, question: &str, options: &SearchOptions) -> BTreeSet<String> {
    mem.search("alice", question, options)
        .unwrap()
        .into_iter()
        .map(|h| h.text)
        .collect()
}

fn list_texts(mem: &Memory, options: &ListOptions) -> BTreeSet<String> {
    mem.list("alice", options)
        .unwrap()
        .into_iter()
        .map(|r| r.text)
        .collect()
}

/// Alice talks to a travel agent in two sessions and to a coach in one.
fn three_sessions(mem: &Memory) {
    let say = |session: &str, who: &str, text: &str, month: u32| {
        mem.add_with(
            "alice",
            session,
            &[Message::user(text).by("Alice").at(date(month, 1))],
            &agent(who),
        )
        .unwrap();
    };
    say(
        "trip-1",
        "travel",
        "I booked a hotel in Kyoto for the cherry blossoms.",
        1,
    );
    say(
        "trip-2",
        "travel",
        "I booked a hotel in Lisbon near the river.",
        2,
    );
    say(
        "run-1",
        "coach",
        "I want to run a marathon and book a hotel in Boston.",
        3,
    );
}

#[test]
fn agent_and_session_scopes_filter_search_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    three_sessions(&mem);
    let kyoto = "Alice: I booked a hotel in Kyoto for the cherry blossoms.";
    let lisbon = "Alice: I booked a hotel in Lisbon near the river.";
    let boston = "Alice: I want to run a marathon and book a hotel in Boston.";
    let all = |o: SearchOptions| hit_texts(&mem, "hotel", &o);
    assert_eq!(
        all(SearchOptions::default()),
        BTreeSet::from([kyoto.into(), lisbon.into(), boston.into()])
    );
    let travel = SearchOptions {
        agent: Some("travel".into()),
        ..SearchOptions::default()
    };
    assert_eq!(all(travel), BTreeSet::from([kyoto.into(), lisbon.into()]));
    let trip_2 = SearchOptions {
        session: Some("trip-2".into()),
        ..SearchOptions::default()
    };
    assert_eq!(all(trip_2), BTreeSet::from([lisbon.into()]));
    let mismatch = SearchOptions {
        session: Some("run-1".into()),
        agent: Some("travel".into()),
        ..SearchOptions::default()
    };
    assert!(all(mismatch).is_empty());
    let unknown_agent = SearchOptions {
        agent: Some("chef".into()),
        ..SearchOptions::default()
    };
    assert!(all(unknown_agent).is_empty());

    let coach = ListOptions {
        agent: Some("coach".into()),
        ..ListOptions::default()
    };
    assert_eq!(list_texts(&mem, &coach), BTreeSet::from([boston.into()]));
    let travel_page = ListOptions {
        agent: Some("travel".into()),
        offset: 1,
        ..ListOptions::default()
    };
    // newest first: Lisbon, then Kyoto
    assert_eq!(
        list_texts(&mem, &travel_page),
        BTreeSet::from([kyoto.into()])
    );

    // A session belongs to the agent that first named it: another agent is refused and
    // nothing is stored.
    let before = mem.messages("alice", "trip-1").unwrap().len();
    let e = mem
        .add_with(
            "alice",
            "trip-1",
            &[Message::user("The coach says hi.")],
            &agent("coach"),
        )
        .unwrap_err();
    assert!(
        matches!(&e, MemoryError::AgentConflict { stored, given, .. } if stored == "travel" && given == "coach"),
        "{e}"
    );
    assert_eq!(mem.messages("alice", "trip-1").unwrap().len(), before);
    // Adding without naming an agent keeps the session's agent.
    mem.add(
        "alice",
        "trip-1",
        &[Message::user("Kyoto hotel has a garden.")],
    )
    .unwrap();
    let e = mem
        .add_with("alice", "s9", &[Message::user("x y z")], &agent(""))
        .unwrap_err();
    assert!(matches!(e, MemoryError::Name(_)), "{e}");
    assert!(
        mem.messages("alice", "s9").is_err(),
        "a refused add stores nothing"
    );

    mem.close().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let travel = SearchOptions {
        agent: Some("travel".into()),
        ..SearchOptions::default()
    };
    let after = hit_texts(&mem, "hotel garden", &travel);
    assert!(
        after.contains("user: Kyoto hotel has a garden."),
        "{after:?}"
    );
    assert!(!after.contains(boston), "{after:?}");
    mem.close().unwrap();
}

/// Alice and Bob plan a trip in one session, and the assistant answers.
fn trip_talk(mem: &Memory) {
    mem.add(
        "alice",
        "plans",
        &[
            Message::user("I want to hike in the Alps this summer.").by("Alice"),
            Message::user("I would rather hike in Norway this summer.").by("Bob"),
            Message::assistant("Both are great places to hike in summer."),
        ],
    )
    .unwrap();
}

#[test]
fn the_speaker_filter_keeps_what_one_person_said() {
    let speaker = |name: &str| SearchOptions {
        speaker: Some(name.into()),
        ..SearchOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    trip_talk(&mem);
    let hike = |o: SearchOptions| hit_texts(&mem, "hike summer", &o);
    assert_eq!(hike(SearchOptions::default()).len(), 3);
    assert_eq!(
        hike(speaker("bob")),
        BTreeSet::from(["Bob: I would rather hike in Norway this summer.".into()])
    );
    assert_eq!(
        hike(speaker("Assistant")),
        BTreeSet::from(["assistant: Both are great places to hike in summer.".into()])
    );
    assert!(hike(speaker("Carol")).is_empty());
    mem.close().unwrap();

    // A model extractor that names nobody: the speaker of each fact's message counts.
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::builder()
        .extractor(Arc::new(recall_common::TurnExtractor))
        .open(dir.path())
        .unwrap();
    trip_talk(&mem);
    mem.flush_summaries().unwrap();
    assert_eq!(
        hit_texts(&mem, "hike summer", &speaker("Alice")),
        BTreeSet::from(["I want to hike in the Alps this summer.".into()])
    );
    mem.close().unwrap();
}

#[test]
fn metadata_is_kept_with_messages_and_forgotten_with_them() {
    const CANARY: &[u8] = b"Zqfrobnitz";
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add(
        "alice",
        "s1",
        &[
            Message::user("My sister lives in Porto.")
                .meta("channel", "email")
                .meta("ticket", "Zqfrobnitz-7")
                .with_id("m1"),
            Message::assistant("Porto is lovely.").with_id("m2"),
        ],
    )
    .unwrap();
    mem.add("alice", "s2", &[Message::user("I like tea.")])
        .unwrap();
    mem.close().unwrap();

    let mem = Memory::open(dir.path()).unwrap();
    let stored = mem.messages("alice", "s1").unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].id.as_deref(), Some("m1"));
    assert_eq!(
        stored[0].metadata.get("channel").map(String::as_str),
        Some("email")
    );
    assert_eq!(stored[0].metadata.len(), 2);
    assert!(stored[1].metadata.is_empty());
    assert_eq!(stored[1].speaker, "assistant");

    let too_many = (0..65).fold(Message::user("many tags"), |m, i| {
        m.meta(format!("k{i}"), "v")
    });
    let e = mem.add("alice", "s3", &[too_many]).unwrap_err();
    assert!(e.to_string().contains("metadata"), "{e}");
    let nul_key = Message::user("odd key").meta("a\0b", "v");
    let e = mem.add("alice", "s3", &[nul_key]).unwrap_err();
    assert!(e.to_string().contains("metadata key"), "{e}");
    assert!(matches!(
        mem.messages("alice", "s3"),
        Err(MemoryError::NotFound { .. })
    ));

    mem.flush_summaries().unwrap();
    mem.db().flush().unwrap();
    assert!(files_common::any_file_holds(dir.path(), CANARY));
    mem.delete_session("alice", "s1").unwrap();
    mem.purge().unwrap();
    assert!(
        !files_common::any_file_holds(dir.path(), CANARY),
        "a file still holds the forgotten metadata"
    );
    assert_eq!(mem.messages("alice", "s2").unwrap().len(), 1);
    mem.close().unwrap();
}

#[test]
fn a_search_as_of_a_past_time_answers_as_the_memory_stood_then() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add(
        "alice",
        "s1",
        &[Message::user("I live in Paris with my cat.")
            .by("Alice")
            .at(date(1, 10))],
    )
    .unwrap();
    mem.add(
        "alice",
        "s2",
        &[Message::user("I adopted a puppy called Rex.")
            .by("Alice")
            .at(date(6, 1))],
    )
    .unwrap();
    let paris = mem
        .search("alice", "where do I live", &SearchOptions::default())
        .unwrap()
        .into_iter()
        .find(|h| h.text.contains("Paris"))
        .unwrap()
        .id;
    // The update is dated now, long after June 2024.
    let berlin = mem
        .update("alice", paris, "Alice lives in Berlin.")
        .unwrap();

    let latest = SearchOptions {
        latest_only: true,
        ..SearchOptions::default()
    };
    let now: Vec<_> = mem
        .search("alice", "where does Alice live", &latest)
        .unwrap();
    assert!(now.iter().any(|h| h.id == berlin) && now.iter().all(|h| h.id != paris));

    let in_march = SearchOptions {
        as_of: Some(date(3, 1)),
        ..latest.clone()
    };
    let then = mem
        .search("alice", "where does Alice live", &in_march)
        .unwrap();
    let hit = then
        .iter()
        .find(|h| h.id == paris)
        .expect("Paris as of March");
    assert!(hit.current && hit.valid_until.is_none(), "{hit:?}");
    assert!(then.iter().all(|h| h.id != berlin));
    // Nearest neighbours by meaning may still come back; the June fact may not.
    assert!(mem
        .search("alice", "puppy Rex", &in_march)
        .unwrap()
        .iter()
        .all(|h| !h.text.contains("Rex")));
    let context = mem
        .context("alice", "where does Alice live", 500, &in_march)
        .unwrap();
    assert!(
        context.contains("Paris") && !context.contains("Rex"),
        "{context}"
    );
    assert!(
        context.starts_with("Reference date: 2024-03-01"),
        "{context}"
    );

    let before_all = SearchOptions {
        as_of: Some(date(1, 1)),
        ..SearchOptions::default()
    };
    assert!(mem
        .search("alice", "Paris", &before_all)
        .unwrap()
        .is_empty());
    mem.close().unwrap();
}

/// One message is deleted by its id: with its metadata and the memories only it
/// supported; the session's other messages stay; what does not exist is an error.
#[test]
fn delete_message_removes_one_message_and_what_only_it_said() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add(
        "alice",
        "s1",
        &[
            Message::user("I keep bees on my roof in Lyon.")
                .with_id("m1")
                .meta("channel", "sms"),
            Message::user("My neighbour Jules bakes bread every Sunday.").with_id("m2"),
        ],
    )
    .unwrap();
    let bees = SearchOptions::default();
    assert!(!mem.search("alice", "bees roof", &bees).unwrap().is_empty());
    let gone = mem.delete_message("alice", "s1", "m1").unwrap();
    assert_eq!((gone.messages, gone.memories), (1, 1), "{gone:?}");
    let left = mem.messages("alice", "s1").unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id.as_deref(), Some("m2"));
    assert!(mem
        .search("alice", "bees roof", &bees)
        .unwrap()
        .iter()
        .all(|h| !h.text.contains("bees")));
    for (session, message, what) in [("s1", "m1", "message"), ("s9", "m2", "session")] {
        match mem.delete_message("alice", session, message) {
            Err(MemoryError::NotFound { what: w, .. }) => assert_eq!(w, what),
            other => panic!("{other:?}"),
        }
    }
    mem.close().unwrap();
}
