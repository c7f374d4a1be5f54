//! The `Memory` API through its public surface only: add one exchange at a time, search,
//! context, get, list, delete (memory, session, user), reopen, erasure, and isolation
//! between users.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

#[path = "files_common/mod.rs"]
mod files_common;

use std::collections::BTreeSet;

use chrono::{DateTime, TimeZone, Utc};
use memforest::{ListOptions, Memory, MemoryError, MemoryId, Message, SearchOptions};

fn day(d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 1, d, 9, 0, 0).unwrap()
}

/// Exchange `i`: the user says a distinct fact, the assistant acknowledges.
fn exchange(i: u32) -> [Message; 2] {
    [
        Message::user(format!(
            "My colleague Person{i} gave me a book about topic{i} on day {i}."
        ))
        .by("Alice")
        .at(day(1 + i % 28)),
        Message::assistant(format!("Nice, the topic{i} book is rare!")).at(day(1 + i % 28)),
    ]
}

/// Every memory of `user`, newest first.
fn everything(mem: &Memory, user: &str) -> Vec<memforest::MemoryRecord> {
    let all = ListOptions {
        limit: usize::MAX,
        ..ListOptions::default()
    };
    mem.list(user, &all).unwrap()
}

fn texts(mem: &Memory, user: &str) -> Vec<String> {
    let mut t: Vec<String> = everything(mem, user).into_iter().map(|r| r.text).collect();
    t.sort();
    t
}

#[test]
fn fifty_exchanges_one_at_a_time_store_what_one_whole_session_stores() {
    let one_by_one = tempfile::tempdir().unwrap();
    let whole = tempfile::tempdir().unwrap();
    let a = Memory::open(one_by_one.path()).unwrap();
    let b = Memory::open(whole.path()).unwrap();
    let mut all = Vec::new();
    for i in 0..50 {
        let added = a.add("alice", "s1", &exchange(i)).unwrap();
        assert_eq!(added.messages, 2, "exchange {i}");
        all.extend(exchange(i));
    }
    let added = b.add("alice", "s1", &all).unwrap();
    assert_eq!(added.messages, 100);
    let (ta, tb) = (texts(&a, "alice"), texts(&b, "alice"));
    assert!(!ta.is_empty());
    assert_eq!(ta, tb, "same memories");
    let unique: BTreeSet<&String> = ta.iter().collect();
    assert_eq!(unique.len(), ta.len(), "no memory stored twice");
    // Retrying a call that named its messages stores nothing twice.
    let named = [Message::user("I keep my bike in the garage.").with_id("m-1")];
    assert_eq!(a.add("alice", "s2", &named).unwrap().messages, 1);
    let again = a.add("alice", "s2", &named).unwrap();
    assert_eq!((again.messages, again.duplicates), (0, 1));
    a.close().unwrap();
    b.close().unwrap();
}

/// The assistant's acknowledgements of what the user said are no memories, so they do
/// not rank beside the user's statements; an assistant's own information is one.
#[test]
fn an_assistant_acknowledgement_is_no_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let exchanges = [
        (
            "I'm vegetarian and allergic to peanuts.",
            "Got it, I'll remember.",
        ),
        ("My dog Rex is a golden retriever.", "Rex sounds lovely."),
        (
            "Where should I stay in Rome?",
            "I recommend the Hotel Artemide near Termini.",
        ),
    ];
    for (n, (said, answer)) in exchanges.into_iter().enumerate() {
        let exchange = [Message::user(said), Message::assistant(answer)];
        mem.add("a", &format!("s{n}"), &exchange).unwrap();
    }
    mem.flush_summaries().unwrap();
    let all = texts(&mem, "a");
    let from_assistant: Vec<&String> = all.iter().filter(|t| t.starts_with("assistant")).collect();
    assert_eq!(
        from_assistant,
        ["assistant: I recommend the Hotel Artemide near Termini."],
        "{all:?}"
    );
    let hits = mem
        .search("a", "what is my dog's name?", &SearchOptions::default())
        .unwrap();
    assert_eq!(hits[0].text, "user: My dog Rex is a golden retriever.");
    mem.close().unwrap();
}

#[test]
fn search_get_and_list_by_id_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let added = mem
        .add(
            "alice",
            "s1",
            &[
                Message::user("I adopted a cat named Miso from the shelter.").at(day(3)),
                Message::assistant("Miso is a lovely name for a cat!").at(day(3)),
            ],
        )
        .unwrap();
    assert!(!added.memories.is_empty());
    mem.add(
        "alice",
        "s2",
        &[Message::user("My sister Carla teaches chemistry in Lisbon.").at(day(9))],
    )
    .unwrap();
    let hits = mem
        .search("alice", "What is my cat called?", &SearchOptions::default())
        .unwrap();
    let miso = hits
        .iter()
        .find(|h| h.text.contains("Miso"))
        .expect("the cat's memory is found");
    assert!(miso.current);
    assert_eq!(miso.start, Some(day(3)));
    assert_eq!(miso.sources[0].session, "s1");
    let id = miso.id;
    let got = mem
        .get("alice", id)
        .unwrap()
        .expect("get by the search's id");
    assert_eq!(got.text, miso.text);
    let listed = mem.list("alice", &ListOptions::default()).unwrap();
    assert!(listed.len() >= 2);
    assert!(listed[0].text.contains("Carla"), "newest first: {listed:?}");
    assert!(listed.windows(2).all(|w| w[0].start >= w[1].start));
    let page = mem
        .list(
            "alice",
            &ListOptions {
                limit: 1,
                offset: 1,
                ..ListOptions::default()
            },
        )
        .unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].id, listed[1].id);
    let context = mem
        .context(
            "alice",
            "Where does Carla teach?",
            1000,
            &SearchOptions::default(),
        )
        .unwrap();
    assert!(context.contains("Lisbon"), "{context}");
    mem.close().unwrap();

    let mem = Memory::open(dir.path()).unwrap();
    let again = mem
        .get("alice", id)
        .unwrap()
        .expect("the id survives a reopen");
    assert_eq!(again, got);
    let parsed: MemoryId = id.to_string().parse().unwrap();
    assert_eq!(parsed, id);
    assert_eq!(
        serde_json::to_value(id).unwrap(),
        serde_json::Value::String(id.to_string())
    );
    mem.close().unwrap();
}

#[test]
fn context_keeps_within_its_token_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    for i in 0..30 {
        mem.add("alice", "s1", &exchange(i)).unwrap();
    }
    let q = "Which books did my colleagues give me?";
    let wide = mem
        .context("alice", q, 100_000, &SearchOptions::default())
        .unwrap();
    let narrow = mem
        .context("alice", q, 120, &SearchOptions::default())
        .unwrap();
    assert!(narrow.len() < wide.len());
    assert!(narrow.len().div_ceil(4) <= 120, "{} bytes", narrow.len());
    mem.close().unwrap();
}

#[test]
fn users_never_see_each_others_memories_even_with_the_same_names() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add(
        "alice",
        "s1",
        &[Message::user("My dog Rex loves the beach at Sandbay.").at(day(2))],
    )
    .unwrap();
    mem.add(
        "bob",
        "s1",
        &[Message::user("My dog Rex hates the vet in Hillford.").at(day(2))],
    )
    .unwrap();
    for (user, mine, theirs) in [
        ("alice", "Sandbay", "Hillford"),
        ("bob", "Hillford", "Sandbay"),
    ] {
        let hits = mem
            .search(user, "What about my dog Rex?", &SearchOptions::default())
            .unwrap();
        assert!(
            hits.iter().any(|h| h.text.contains(mine)),
            "{user}: {hits:?}"
        );
        assert!(
            hits.iter().all(|h| !h.text.contains(theirs)),
            "{user}: {hits:?}"
        );
        for r in mem.list(user, &ListOptions::default()).unwrap() {
            assert!(!r.text.contains(theirs));
        }
    }
    let alices = mem.list("alice", &ListOptions::default()).unwrap();
    assert_eq!(
        mem.get("bob", alices[0].id).unwrap(),
        None,
        "ids are per user"
    );
    mem.delete_user("bob").unwrap();
    assert!(mem.list("bob", &ListOptions::default()).unwrap().is_empty());
    assert_eq!(mem.list("alice", &ListOptions::default()).unwrap(), alices);
    mem.close().unwrap();
}

#[test]
fn deleting_what_does_not_exist_is_an_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add(
        "alice",
        "s1",
        &[Message::user("I play the cello on Sundays.")],
    )
    .unwrap();
    let before = mem.list("alice", &ListOptions::default()).unwrap();
    let missing: MemoryId = "00000000000000ff".parse().unwrap();
    let cases = [
        mem.delete("alice", missing).map(|_| ()),
        mem.delete_session("alice", "nope").map(|_| ()),
        mem.delete_user("nobody").map(|_| ()),
    ];
    for case in cases {
        match case {
            Err(MemoryError::NotFound { .. }) => {}
            other => panic!("expected NotFound, got {other:?}"),
        }
    }
    assert!(matches!(
        mem.add("", "s1", &[Message::user("x y z")]),
        Err(MemoryError::Name(_))
    ));
    assert!("not-an-id".parse::<MemoryId>().is_err());
    assert_eq!(mem.list("alice", &ListOptions::default()).unwrap(), before);
    let gone = mem.delete("alice", before[0].id).unwrap();
    assert_eq!(gone.memories, 1);
    assert_eq!(mem.get("alice", before[0].id).unwrap(), None);
    mem.close().unwrap();
}

/// Delete, then purge: no file of the store holds a byte of the deleted text.
#[test]
fn delete_user_then_purge_leaves_no_byte_of_the_text() {
    const CANARY: &[u8] = b"Qworbletrix";
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add(
        "alice",
        "s1",
        &[Message::user(
            "The Qworbletrix safe code is taped under the desk.",
        )],
    )
    .unwrap();
    mem.add(
        "bob",
        "s1",
        &[Message::user("I like green tea in the morning.")],
    )
    .unwrap();
    mem.flush_summaries().unwrap();
    mem.db().flush().unwrap();
    assert!(files_common::any_file_holds(dir.path(), CANARY));
    mem.delete_user("alice").unwrap();
    mem.purge().unwrap();
    assert!(
        !files_common::any_file_holds(dir.path(), CANARY),
        "a file still holds the deleted text"
    );
    assert!(!mem.list("bob", &ListOptions::default()).unwrap().is_empty());
    mem.close().unwrap();
}

/// The same user moves from Paris to Berlin, recorded through `update`: a latest-only
/// search finds Berlin, history shows Paris with the end of its validity, and both
/// survive a reopen.
#[test]
fn update_supersedes_and_history_keeps_the_old_version() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let added = mem
        .add(
            "alice",
            "s1",
            &[Message::user("I live in Paris and I work as a nurse.").at(day(10))],
        )
        .unwrap();
    let paris = mem
        .search("alice", "Where do I live?", &SearchOptions::default())
        .unwrap()
        .into_iter()
        .find(|h| h.text.contains("Paris"))
        .expect("the Paris memory");
    assert!(added.memories.contains(&paris.id));
    let berlin = mem.update("alice", paris.id, "I live in Berlin.").unwrap();
    assert_ne!(berlin, paris.id);
    let latest = SearchOptions {
        latest_only: true,
        ..SearchOptions::default()
    };
    let hits = mem.search("alice", "Where do I live?", &latest).unwrap();
    assert!(hits.iter().any(|h| h.id == berlin && h.current), "{hits:?}");
    assert!(hits.iter().all(|h| h.id != paris.id), "{hits:?}");
    let all = mem
        .search("alice", "Where do I live?", &SearchOptions::default())
        .unwrap();
    let old = all
        .iter()
        .find(|h| h.id == paris.id)
        .expect("the old version stays");
    assert!(!old.current);
    assert!(old.valid_until.is_some());
    mem.close().unwrap();

    let mem = Memory::open(dir.path()).unwrap();
    for id in [paris.id, berlin] {
        let versions = mem.history("alice", id).unwrap();
        assert_eq!(versions.len(), 2, "{versions:?}");
        assert_eq!(versions[0].id, paris.id);
        assert_eq!(versions[1].id, berlin);
        assert!(versions[0].valid_until.is_some());
        assert_eq!(versions[0].valid_until, versions[1].start);
        assert_eq!(versions[1].valid_until, None);
        assert!(!versions[0].current && versions[1].current);
    }
    // `get` and `list` say which version holds; `latest_only` lists the current one.
    let old = mem.get("alice", paris.id).unwrap().unwrap();
    let new = mem.get("alice", berlin).unwrap().unwrap();
    assert!(!old.current && new.current, "{old:?} {new:?}");
    assert_eq!(old.valid_until, new.start);
    let listed = |latest_only| {
        let options = ListOptions {
            latest_only,
            ..ListOptions::default()
        };
        let list = mem.list("alice", &options).unwrap();
        list.into_iter()
            .map(|r| (r.id, r.current))
            .collect::<Vec<_>>()
    };
    let all = listed(false);
    assert!(
        all.contains(&(paris.id, false)) && all.contains(&(berlin, true)),
        "{all:?}"
    );
    let current = listed(true);
    assert!(current.contains(&(berlin, true)), "{current:?}");
    assert!(
        current.iter().all(|&(id, holds)| id != paris.id && holds),
        "{current:?}"
    );
    let again = mem.update("alice", berlin, "I live in Munich.").unwrap();
    assert_eq!(mem.history("alice", paris.id).unwrap().len(), 3);
    assert_eq!(
        mem.history("alice", again).unwrap().last().unwrap().id,
        again
    );
    let missing: MemoryId = "0000000000000001".parse().unwrap();
    assert!(matches!(
        mem.update("alice", missing, "x"),
        Err(MemoryError::NotFound { .. })
    ));
    assert!(matches!(
        mem.history("bob", paris.id),
        Err(MemoryError::NotFound { .. })
    ));
    mem.close().unwrap();
}

/// Deleting a user reports what it removed, and a purge reports the WAL segments it
/// removed (both used to say 0 after removing everything).
/// An update's text is a memory of its own even when another memory says the same: two
/// memories corrected to one text are two versions, each superseding its own memory, and
/// an update to a conversation memory's text neither returns nor deletes that memory.
#[test]
fn an_update_to_the_text_of_another_memory_is_a_memory_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let said = [
        "I live in Paris.",
        "My home is in Paris, France.",
        "I like green tea.",
    ];
    for (n, text) in said.into_iter().enumerate() {
        mem.add("u", &format!("s{n}"), &[Message::user(text)])
            .unwrap();
    }
    let all = everything(&mem, "u");
    let find = |words: &str| all.iter().find(|m| m.text.contains(words)).unwrap().id;
    let (b, c, tea) = (find("live in Paris"), find("home is"), find("tea"));
    let nb = mem.update("u", b, "Alice lives in Berlin.").unwrap();
    let nc = mem.update("u", c, "Alice lives in Berlin.").unwrap();
    assert_ne!(nb, nc);
    for (old, new) in [(b, nb), (c, nc)] {
        let versions: Vec<MemoryId> = mem
            .history("u", old)
            .unwrap()
            .iter()
            .map(|v| v.id)
            .collect();
        assert_eq!(versions, [old, new]);
        assert!(!mem.get("u", old).unwrap().unwrap().current);
    }
    let tea_text = mem.get("u", tea).unwrap().unwrap().text;
    let nd = mem.update("u", nb, &tea_text).unwrap();
    assert_ne!(nd, tea);
    mem.delete("u", nd).unwrap();
    let kept = mem.get("u", tea).unwrap().unwrap();
    assert!(kept.current, "{kept:?}");
    assert!(mem.get("u", nc).unwrap().unwrap().current);
    // Nor does a conversation that later says a version's text merge into it.
    let version = mem.update("u", nc, "user: Alice lives in Berlin.").unwrap();
    mem.add("u", "s9", &[Message::user("Alice lives in Berlin.")])
        .unwrap();
    let said = everything(&mem, "u")
        .into_iter()
        .filter(|m| m.text == "user: Alice lives in Berlin.")
        .map(|m| m.id)
        .collect::<Vec<_>>();
    assert_eq!(said.len(), 2, "{said:?}");
    mem.delete("u", version).unwrap();
    let left: Vec<MemoryId> = said.into_iter().filter(|&id| id != version).collect();
    assert_eq!(left.len(), 1);
    assert!(
        mem.get("u", left[0]).unwrap().is_some(),
        "the conversation's memory stays"
    );
    mem.close().unwrap();
}

/// An update back to an earlier version's text is a new version: the history keeps
/// every period in order, one version is current, and deleting the newest leaves the
/// earlier ones. An update to the memory's own text changes nothing.
#[test]
fn an_update_back_to_an_earlier_text_is_a_new_version() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add("u", "s", &[Message::user("I live in Rome.")])
        .unwrap();
    let rome = everything(&mem, "u")[0].id;
    let paris = mem.update("u", rome, "Alice lives in Paris.").unwrap();
    let berlin = mem.update("u", paris, "Alice lives in Berlin.").unwrap();
    let back = mem.update("u", berlin, "Alice lives in Paris.").unwrap();
    assert!(![rome, paris, berlin].contains(&back));
    assert_eq!(
        mem.update("u", back, "Alice lives in Paris.").unwrap(),
        back
    );
    let history = mem.history("u", back).unwrap();
    let ids: Vec<MemoryId> = history.iter().map(|v| v.id).collect();
    assert_eq!(ids, [rome, paris, berlin, back]);
    assert_eq!(history.iter().filter(|v| v.current).count(), 1);
    mem.delete("u", back).unwrap();
    assert!(mem.get("u", paris).unwrap().is_some());
    assert!(mem.get("u", berlin).unwrap().unwrap().current);
    mem.close().unwrap();
}

#[test]
fn delete_user_and_purge_report_what_they_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    for i in 0..3 {
        mem.add("alice", "s1", &exchange(i)).unwrap();
    }
    let stored = everything(&mem, "alice").len() as u64;
    let deleted = mem.delete_user("alice").unwrap();
    assert_eq!(deleted.messages, 6);
    assert_eq!(deleted.memories, stored);
    let purged = mem.purge().unwrap();
    assert!(purged.wal_segments_removed >= 1, "{purged:?}");
    mem.close().unwrap();
}

/// Adds to one session from many threads at once, none giving message ids: each message
/// gets its own number, so none is taken for a repeat of another and skipped.
/// Closes a `Memory` the test's threads shared, once they are done with it.
fn close_shared(mem: std::sync::Arc<Memory>) {
    std::sync::Arc::try_unwrap(mem)
        .ok()
        .unwrap()
        .close()
        .unwrap();
}

#[test]
fn concurrent_adds_to_one_session_store_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let mem = std::sync::Arc::new(Memory::open(dir.path()).unwrap());
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let mem = std::sync::Arc::clone(&mem);
            std::thread::spawn(move || {
                let said = Message::user(format!("I like fruit number {i}.")).by("Alice");
                mem.add("alice", "s", &[said]).unwrap()
            })
        })
        .collect();
    for t in threads {
        let added = t.join().unwrap();
        assert_eq!((added.messages, added.conflicts.len()), (1, 0), "{added:?}");
    }
    assert_eq!(mem.messages("alice", "s").unwrap().len(), 16);
    close_shared(mem);
}

/// Adds racing deletes of their session: every add succeeds (what it stored may be
/// forgotten at once; its extraction then finds the cell gone, which is no error) and the
/// store closes without a background error.
#[test]
fn adds_racing_deletes_of_their_session_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let mem = std::sync::Arc::new(Memory::open(dir.path()).unwrap());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let deleter = {
        let (mem, stop) = (std::sync::Arc::clone(&mem), std::sync::Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = mem.delete_session("alice", "s");
            }
        })
    };
    for i in 0..300 {
        let said =
            Message::user(format!("I like fruit number {i} a lot.")).with_id(format!("m{i}"));
        if let Err(e) = mem.add("alice", "s", &[said]) {
            panic!("add {i}: {e}");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    deleter.join().unwrap();
    close_shared(mem);
}

/// Purges from several threads at once, between adds and deletes: each succeeds (a file
/// another purge removed while this one measured the directory is not an error).
#[test]
fn concurrent_purges_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let mem = std::sync::Arc::new(Memory::open(dir.path()).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|k| {
            let mem = std::sync::Arc::clone(&mem);
            std::thread::spawn(move || {
                for i in 0..40 {
                    let session = format!("t{k}");
                    let said = Message::user(format!("Thread {k} round {i} likes plums."));
                    mem.add("alice", &session, &[said]).unwrap();
                    mem.delete_session("alice", &session).unwrap();
                    if let Err(e) = mem.purge() {
                        panic!("thread {k} round {i}: {e}");
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    close_shared(mem);
}

/// A search may ask for any number of memories: it gets those there are, and nothing is
/// reserved for the ones that are not.
#[test]
fn a_search_for_more_memories_than_exist_returns_those_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add("alice", "s", &exchange(1)).unwrap();
    for k in [1_000_000_000, usize::MAX] {
        let options = SearchOptions {
            k,
            ..SearchOptions::default()
        };
        let hits = mem.search("alice", "book topic1", &options).unwrap();
        assert!(!hits.is_empty() && hits.len() <= 2, "{hits:?}");
    }
    mem.close().unwrap();
}

/// `k` is how many memories a search returns: zero asks for none, as `ListOptions::limit`
/// zero lists none. A context with `k` zero holds no memory, only the recent messages.
#[test]
fn a_search_for_zero_memories_returns_none() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add("alice", "s", &exchange(1)).unwrap();
    let none = SearchOptions {
        k: 0,
        ..SearchOptions::default()
    };
    let one = SearchOptions {
        k: 1,
        ..SearchOptions::default()
    };
    assert_eq!(mem.search("alice", "book topic1", &one).unwrap().len(), 1);
    assert_eq!(mem.search("alice", "book topic1", &none).unwrap(), []);
    let with = mem.context("alice", "book topic1", 1000, &one).unwrap();
    let without = mem.context("alice", "book topic1", 1000, &none).unwrap();
    assert!(without.len() < with.len(), "{without:?} vs {with:?}");
    mem.close().unwrap();
}

/// A search at a seqno reads only while a snapshot at that seqno is held; a seqno no live
/// snapshot holds, past the latest or below it, is refused.
#[test]
fn a_search_at_a_seqno_no_snapshot_holds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add("alice", "s", &exchange(1)).unwrap();
    let snap = mem.snapshot();
    let at = |seqno| SearchOptions {
        snapshot: Some(seqno),
        ..SearchOptions::default()
    };
    assert_eq!(
        mem.search("alice", "book topic1", &at(snap.seqno()))
            .unwrap()
            .len(),
        2
    );
    assert!(snap.seqno() < 12345);
    for seqno in [0, snap.seqno() + 1, 12345, u64::MAX] {
        let err = mem.search("alice", "book topic1", &at(seqno)).unwrap_err();
        assert!(
            matches!(err, MemoryError::SnapshotNotHeld { seqno: s } if s == seqno),
            "{seqno}: {err}"
        );
    }
    drop(snap);
    mem.close().unwrap();
}

/// A question is held to the limit of a message's text, refused with an error naming the
/// field and the limit before any work.
#[test]
fn a_question_over_the_message_limit_is_refused_naming_the_limit() {
    use memforest::memory::limits::MAX_TURN_TEXT_BYTES;
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    mem.add("alice", "s", &exchange(1)).unwrap();
    let at_limit = format!("book topic1 {}", "x".repeat(MAX_TURN_TEXT_BYTES - 12));
    assert_eq!(at_limit.len(), MAX_TURN_TEXT_BYTES);
    let options = SearchOptions::default();
    assert!(!mem.search("alice", &at_limit, &options).unwrap().is_empty());
    let over = "word ".repeat(MAX_TURN_TEXT_BYTES / 5 + 1);
    let errors = [
        mem.search("alice", &over, &options)
            .map(|_| ())
            .unwrap_err(),
        mem.context("alice", &over, 1000, &options)
            .map(|_| ())
            .unwrap_err(),
    ];
    for err in errors {
        assert!(
            matches!(
                err,
                MemoryError::Name(memforest_engine::InputError::TooLong {
                    field: "question",
                    limit: MAX_TURN_TEXT_BYTES,
                    ..
                })
            ),
            "{err}"
        );
        assert!(err.to_string().contains("32768-byte limit"), "{err}");
    }
    mem.close().unwrap();
}

/// A summarizer that, once let go, fills the disk (every later write and sync fails with
/// `ENOSPC`) and then gives its summary: writing that summary poisons the WAL.
#[derive(Debug)]
struct FillsDisk {
    fs: memforest_io::FaultStorage,
    go: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl memforest::memory::summarize::Summarizer for FillsDisk {
    fn name(&self) -> &str {
        "fills-disk"
    }

    fn summarize(
        &self,
        request: &memforest::memory::summarize::SummaryRequest,
    ) -> Result<memforest::memory::summarize::SummaryOutput, memforest::memory::model::ModelError>
    {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !self.go.load(std::sync::atomic::Ordering::SeqCst)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        for kind in [memforest_io::OpKind::Write, memforest_io::OpKind::Sync] {
            self.fs.inject(memforest_io::Fault {
                kind,
                nth: 1,
                errno: memforest_io::Errno::NoSpace,
                sticky: true,
            });
        }
        memforest::memory::summarize::ExtractiveSummarizer::default().summarize(request)
    }
}

/// A storage failure of the background summary work (a full disk poisoning the WAL) is
/// reported by `flush_summaries` as the engine error it is, not as a failed model call.
#[test]
fn a_full_disk_under_the_summaries_is_reported_as_an_engine_error() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let fs = memforest_io::FaultStorage::new(7);
    let go = Arc::new(AtomicBool::new(false));
    let mut options = memforest::Options::default();
    options.engine.storage = Arc::new(fs.clone());
    options.memory.summarizer = Arc::new(FillsDisk {
        fs,
        go: Arc::clone(&go),
    });
    let mem = Memory::open_with(dir.path(), options).unwrap();
    mem.add("alice", "s", &exchange(1)).unwrap();
    go.store(true, Ordering::SeqCst);
    let r = mem.flush_summaries();
    eprintln!(
        "DBG {r:?} {:?} {:?}",
        mem.memory_stats(),
        texts(&mem, "alice")
    );
    let err = r.unwrap_err();
    assert!(matches!(err, MemoryError::Engine(_)), "{err:?}");
    let text = err.to_string();
    assert!(!text.contains("model call failed"), "{text}");
    assert!(text.contains("No space left on device"), "{text}");
}

/// A user or session id that is only whitespace names nobody a caller could tell apart
/// from another: a write refuses it naming the field (reads of such a name still answer).
/// A speaker may not hold NUL, as a user or session id may not, and a message's text may
/// not be only whitespace.
#[test]
fn blank_ids_and_texts_and_a_nul_in_a_speaker_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let said = [Message::user("I keep bees in the garden.")];
    for user in [" ", "\t\n"] {
        let err = mem.add(user, "s1", &said).unwrap_err();
        assert!(matches!(err, MemoryError::Name(_)), "{err}");
        assert!(err.to_string().contains("user id"), "{err}");
        let err = mem
            .update(user, "00000000000000ff".parse().unwrap(), "x")
            .unwrap_err();
        assert!(matches!(err, MemoryError::Name(_)), "{err}");
        assert_eq!(
            mem.search(user, "bees", &SearchOptions::default()).unwrap(),
            []
        );
        assert!(mem.list(user, &ListOptions::default()).unwrap().is_empty());
    }
    for session in [" ", "\t\n"] {
        let err = mem.add("alice", session, &said).unwrap_err();
        assert!(matches!(err, MemoryError::Input(_)), "{err}");
        assert!(err.to_string().contains("session id"), "{err}");
    }
    let err = mem
        .add("alice", "s1", &[Message::user("hello").by("Al\0ice")])
        .unwrap_err();
    assert!(matches!(err, MemoryError::Input(_)), "{err}");
    assert!(err.to_string().contains("speaker contains a NUL"), "{err}");
    // A text that is only whitespace is as empty as no text.
    let err = mem
        .add("alice", "s1", &[Message::user(" \n\t ")])
        .unwrap_err();
    assert!(matches!(err, MemoryError::Input(_)), "{err}");
    assert!(
        err.to_string().contains("turn text is only whitespace"),
        "{err}"
    );
    assert!(mem
        .list("alice", &ListOptions::default())
        .unwrap()
        .is_empty());
    // Names with whitespace around others stay names of their own.
    mem.add(" alice ", " s1 ", &said).unwrap();
    let blank_agent = memforest::AddOptions {
        agent: Some(" ".into()),
        ..memforest::AddOptions::default()
    };
    let err = mem
        .add_with("alice", "s2", &said, &blank_agent)
        .unwrap_err();
    assert!(err.to_string().contains("agent"), "{err}");
    assert!(mem.messages("alice", "s2").is_err(), "nothing stored");
    // A filter no write could have stored is refused, not answered with nothing.
    let long = "x".repeat(5000);
    for (session, agent) in [
        (Some(""), None),
        (None, Some("a\0b")),
        (Some(long.as_str()), None),
        (Some(" "), None),
        (None, Some("\t")),
    ] {
        let options = SearchOptions {
            session: session.map(str::to_owned),
            agent: agent.map(str::to_owned),
            ..SearchOptions::default()
        };
        let err = mem.search(" alice ", "bees", &options).unwrap_err();
        assert!(matches!(err, MemoryError::Name(_)), "{err}");
        let err = mem.context(" alice ", "bees", 100, &options).unwrap_err();
        assert!(matches!(err, MemoryError::Name(_)), "{err}");
        let list = ListOptions {
            session: session.map(str::to_owned),
            agent: agent.map(str::to_owned),
            ..ListOptions::default()
        };
        let err = mem.list(" alice ", &list).unwrap_err();
        assert!(matches!(err, MemoryError::Name(_)), "{err}");
    }
    mem.close().unwrap();
}

/// Every engine type the `Memory` API takes or returns is named through `memforest`
/// alone, without a dependency on `memforest-engine`.
#[test]
fn the_engine_types_of_the_api_are_named_through_memforest() {
    let dir = tempfile::tempdir().unwrap();
    let options = memforest::Options {
        engine: memforest::engine::Options::default(),
        memory: memforest::memory::MemoryOptions {
            durability: memforest::Durability::SyncData,
            ..memforest::memory::MemoryOptions::default()
        },
    };
    let mem = Memory::open_with(dir.path(), options).unwrap();
    mem.add("alice", "s", &exchange(1)).unwrap();
    let report: &memforest::OpenReport = mem.open_report();
    assert!(!report.is_damaged());
    let tenants: Vec<memforest::TenantId> = mem.tenants().unwrap();
    assert_eq!(tenants, [memforest::TenantId::new("alice").unwrap()]);
    let db: &memforest::Db = mem.db();
    let snapshot: memforest::Snapshot = db.snapshot();
    assert!(snapshot.seqno() > 0);
    let err = Memory::open(dir.path()).unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::Engine(memforest::engine::Error::Locked { .. })
        ),
        "{err}"
    );
    drop(snapshot);
    mem.close().unwrap();
}

/// A session's messages as `messages` returns them, numbered ids included, can be added to
/// another store (a backup restored) and sent again (a retry): stored once, with their
/// ids, and a later message without an id is numbered after them.
#[test]
fn a_session_s_messages_sent_back_are_stored_once_with_their_ids() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let from = Memory::open(a.path()).unwrap();
    from.add("alice", "s1", &exchange(1)).unwrap();
    let mut named = Message::user("My sister lives in Oslo.");
    named.id = Some("m-7".into());
    from.add("alice", "s1", &[named]).unwrap();
    from.add("alice", "s1", &exchange(2)).unwrap();
    let sent = from.messages("alice", "s1").unwrap();
    from.close().unwrap();
    let ids = |m: &[Message]| m.iter().map(|m| m.id.clone().unwrap()).collect::<Vec<_>>();
    assert_eq!(
        ids(&sent),
        ["s1#turn_0", "s1#turn_1", "m-7", "s1#turn_3", "s1#turn_4"]
    );
    let to = Memory::open(b.path()).unwrap();
    let added = to.add("alice", "s1", &sent).unwrap();
    assert_eq!((added.messages, added.duplicates), (5, 0));
    assert_eq!(to.messages("alice", "s1").unwrap(), sent);
    let again = to.add("alice", "s1", &sent).unwrap();
    assert_eq!((again.messages, again.duplicates), (0, 5));
    to.add("alice", "s1", &[Message::user("I moved to Bergen.")])
        .unwrap();
    let now = to.messages("alice", "s1").unwrap();
    assert_eq!(ids(&now)[5], "s1#turn_5");
    to.close().unwrap();
}

/// A numbered id that a later message without an id could be given is refused before
/// anything is stored, the agent's claim of the session included.
#[test]
fn a_numbered_id_a_later_message_could_be_given_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    let mut ahead = Message::user("My sister lives in Oslo.");
    ahead.id = Some("s1#turn_1".into());
    let options = memforest::AddOptions {
        agent: Some("bot".into()),
        ..memforest::AddOptions::default()
    };
    let err = mem
        .add_with("alice", "s1", &[ahead.clone()], &options)
        .unwrap_err();
    assert!(
        matches!(&err, MemoryError::ReservedId { id, .. } if id == "s1#turn_1"),
        "{err}"
    );
    assert!(matches!(
        mem.messages("alice", "s1"),
        Err(MemoryError::NotFound { .. })
    ));
    // With one message stored first, turn_1 is below the count after the add.
    mem.add_with(
        "alice",
        "s1",
        &[Message::user("Hello there, friend.")],
        &options,
    )
    .unwrap();
    mem.add_with("alice", "s1", &[ahead], &options).unwrap();
    let mut far = Message::user("I work as a nurse.");
    far.id = Some("s1#turn_99999999999999999999999".into());
    assert!(matches!(
        mem.add("alice", "s1", &[far]),
        Err(MemoryError::ReservedId { .. })
    ));
    assert_eq!(mem.messages("alice", "s1").unwrap().len(), 2);
    mem.close().unwrap();
}
