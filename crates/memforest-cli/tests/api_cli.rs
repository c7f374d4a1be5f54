//! The `Memory` API's verbs as commands: `add` one message at a time (or a file of them),
//! `search`, `get`, `list`, `profile`, `forget`, driven through the built binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use common::{fails, ok};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let out = ok(&args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

fn texts(v: &Value, field: &str) -> Vec<String> {
    v[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect()
}

/// Alice's three exchanges (Paris in January, her sister in February, Berlin in April),
/// one message per `add`; the last exchange from a messages file.
fn add_alice(db: &str, dir: &std::path::Path) {
    let said = [
        (
            "s1",
            "2024-01-10T09:00:00Z",
            "I live in Paris with my cat Miso.",
        ),
        ("s2", "2024-02-14 09:00", "My sister Emma works as a nurse."),
    ];
    for (session, time, text) in said {
        let v = json(&[
            "add",
            "--db",
            db,
            "--user",
            "alice",
            "--session",
            session,
            "--speaker",
            "Alice",
            "--time",
            time,
            text,
        ]);
        assert_eq!(v["messages"], 1, "{v}");
        assert_eq!(v["memories"][0]["text"], format!("Alice: {text}"), "{v}");
        let out = ok(&[
            "add",
            "--db",
            db,
            "--user",
            "alice",
            "--session",
            session,
            "--role",
            "assistant",
            "--time",
            time,
            "That is good to know, thank you.",
        ]);
        assert!(
            out.starts_with(&format!(
                "stored 1 message in session \"{session}\" of user \"alice\""
            )),
            "{out}"
        );
    }
    let file = dir.join("s3.jsonl");
    std::fs::write(
        &file,
        "{\"role\": \"user\", \"content\": \"I moved to Berlin last month.\", \"name\": \"Alice\", \"time\": \"2024-04-02T09:00:00Z\", \"id\": \"m1\"}\n\
         {\"role\": \"assistant\", \"content\": \"Welcome to Berlin, enjoy it!\", \"time\": \"2024-04-02T09:01:00Z\", \"id\": \"m2\"}\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let v = json(&[
        "add",
        "--db",
        db,
        "--user",
        "alice",
        "--session",
        "s3",
        "--file",
        file,
    ]);
    assert_eq!(v["messages"], 2, "{v}");
    // The same file again stores nothing: its messages have ids.
    let v = json(&[
        "add",
        "--db",
        db,
        "--user",
        "alice",
        "--session",
        "s3",
        "--file",
        file,
    ]);
    assert_eq!(v["messages"], 0, "{v}");
    assert_eq!(v["duplicates"], 2, "{v}");
}

fn add_bob(db: &str) {
    // Same names as Alice's memories, other facts.
    ok(&[
        "add",
        "--db",
        db,
        "--user",
        "bob",
        "--session",
        "s1",
        "--speaker",
        "Bob",
        "--time",
        "2024-03-01",
        "I live in Lisbon with my dog Rex, and my sister Emma visits from Paris.",
    ]);
}

#[test]
fn add_one_message_at_a_time_then_search_get_list_profile() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    add_alice(db, dir.path());

    let found = json(&[
        "search", "--db", db, "--user", "alice", "where", "does", "Alice", "live", "Berlin",
    ]);
    assert_eq!(found["question"], "where does Alice live Berlin");
    let hits = found["hits"].as_array().unwrap();
    let berlin = hits
        .iter()
        .find(|h| h["text"] == "Alice: I moved to Berlin last month.")
        .unwrap_or_else(|| panic!("{found}"));
    assert!(hits
        .iter()
        .any(|h| h["text"].as_str().unwrap().contains("Paris")));
    assert_eq!(berlin["current"], true);
    assert_eq!(berlin["sources"][0]["session"], "s3");
    assert_eq!(berlin["sources"][0]["messages"][0], "m1");
    let id = berlin["id"].as_str().unwrap();
    assert_eq!(id.len(), 16, "{id}");

    // k and the time range bound what is found.
    let one = json(&[
        "search", "--db", db, "--user", "alice", "--k", "1", "Berlin",
    ]);
    assert_eq!(one["hits"].as_array().unwrap().len(), 1);
    let before = json(&[
        "search",
        "--db",
        db,
        "--user",
        "alice",
        "--until",
        "2024-02-20",
        "Paris",
        "Berlin",
    ]);
    let before = texts(&before, "hits");
    assert!(before.iter().any(|t| t.contains("Paris")), "{before:?}");
    assert!(!before.iter().any(|t| t.contains("Berlin")), "{before:?}");
    let text = ok(&["search", "--db", db, "--user", "alice", "Berlin"]);
    assert!(text.contains("  1. ["), "{text}");
    assert!(text.contains(id), "{text}");

    // get by the id search gave
    let got = json(&["get", "--db", db, "--user", "alice", id]);
    assert_eq!(got["id"], id);
    assert_eq!(got["text"], "Alice: I moved to Berlin last month.");
    assert_eq!(got["sources"][0]["session"], "s3");
    let text = ok(&["get", "--db", db, "--user", "alice", id]);
    assert!(
        text.contains("text:   Alice: I moved to Berlin last month."),
        "{text}"
    );

    // list: newest first, paged
    let listed = json(&["list", "--db", db, "--user", "alice"]);
    let memories = listed["memories"].as_array().unwrap();
    // The assistant's replies ("That is good to know, thank you.") are acknowledgements.
    assert_eq!(memories.len(), 3, "{listed}");
    let starts: Vec<&str> = memories
        .iter()
        .map(|m| m["start"].as_str().unwrap())
        .collect();
    let mut sorted = starts.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(starts, sorted, "newest first");
    let alices: Vec<&str> = memories
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .filter(|t| t.starts_with("Alice: "))
        .collect();
    assert_eq!(
        alices,
        [
            "Alice: I moved to Berlin last month.",
            "Alice: My sister Emma works as a nurse.",
            "Alice: I live in Paris with my cat Miso.",
        ]
    );
    let page = json(&[
        "list", "--db", db, "--user", "alice", "--offset", "1", "--limit", "2",
    ]);
    assert_eq!(page["memories"].as_array().unwrap(), &memories[1..3]);
    let text = ok(&["list", "--db", db, "--user", "alice", "--limit", "1"]);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with(memories[0]["id"].as_str().unwrap()),
        "{text}"
    );

    // profile: what is known about the user, from the summaries the writers' close wrote
    let profile = json(&["profile", "--db", db, "--user", "alice"]);
    assert_eq!(profile["user"], "alice");
    let summary = profile["summary"]
        .as_str()
        .unwrap_or_else(|| panic!("{profile}"));
    assert!(summary.contains("Berlin"), "{profile}");
    let current = profile["current"].as_array().unwrap();
    let residence = current
        .iter()
        .find(|v| v["subject"] == "alice" && v["attribute"] == "residence")
        .unwrap_or_else(|| panic!("{profile}"));
    assert!(
        residence["text"].as_str().unwrap().contains("Berlin"),
        "{profile}"
    );
    let text = ok(&["profile", "--db", db, "--user", "alice"]);
    assert!(
        text.starts_with("alice:\n  residence: Alice: I moved to Berlin"),
        "{text}"
    );
    assert!(text.contains("\nuser \"alice\": "), "{text}");

    // an unknown user is a clear empty result
    let v = json(&["list", "--db", db, "--user", "carol"]);
    assert_eq!(v["memories"].as_array().unwrap().len(), 0);
    assert_eq!(
        ok(&["list", "--db", db, "--user", "carol"]),
        "no memories of user \"carol\"\n"
    );
    assert_eq!(
        ok(&["search", "--db", db, "--user", "carol", "Berlin"]),
        "no memories of user \"carol\" match\n"
    );
    let text = ok(&["profile", "--db", db, "--user", "carol"]);
    assert!(
        text.starts_with("nothing known about user \"carol\""),
        "{text}"
    );
}

#[test]
fn two_users_never_see_each_others_memories() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    add_alice(db, dir.path());
    add_bob(db);

    let alice = json(&[
        "search",
        "--db",
        db,
        "--user",
        "alice",
        "Lisbon Rex Emma Paris",
    ]);
    // Alice's memories are hers and her assistant's; none is Bob's.
    for t in texts(&alice, "hits") {
        assert!(!t.starts_with("Bob: "), "alice sees {t:?}");
    }
    let bob = json(&[
        "search",
        "--db",
        db,
        "--user",
        "bob",
        "Berlin Miso nurse Emma Paris",
    ]);
    let bob = texts(&bob, "hits");
    assert!(!bob.is_empty());
    for t in &bob {
        assert!(!t.starts_with("Alice: "), "bob sees {t:?}");
    }
    let listed = json(&["list", "--db", db, "--user", "bob"]);
    assert_eq!(
        texts(&listed, "memories"),
        ["Bob: I live in Lisbon with my dog Rex, and my sister Emma visits from Paris."]
    );
    // Alice's ids mean nothing for Bob: get fails and forget changes nothing.
    let alice_ids: Vec<String> = json(&["list", "--db", db, "--user", "alice"])["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    let err = fails(&["get", "--db", db, "--user", "bob", &alice_ids[0]]);
    assert!(
        err.contains(&format!("no memory {} for user \"bob\"", alice_ids[0])),
        "{err}"
    );
    let err = fails(&[
        "forget",
        "--db",
        db,
        "--user",
        "bob",
        "--memory",
        &alice_ids[0],
    ]);
    assert!(err.contains("for user \"bob\""), "{err}");
    assert_eq!(
        json(&["list", "--db", db, "--user", "alice"])["memories"]
            .as_array()
            .unwrap()
            .len(),
        alice_ids.len()
    );

    // Forgetting Bob leaves Alice whole.
    let v = json(&["forget", "--db", db, "--user", "bob", "--all"]);
    assert_eq!(v["forgot"], "everything");
    assert_eq!(v["messages"], 1, "{v}");
    assert_eq!(v["memories"], 1, "{v}");
    assert_eq!(
        ok(&["list", "--db", db, "--user", "bob"]),
        "no memories of user \"bob\"\n"
    );
    let listed = json(&["list", "--db", db, "--user", "alice"]);
    assert_eq!(
        listed["memories"].as_array().unwrap().len(),
        alice_ids.len()
    );
}

#[test]
fn forget_removes_what_exists_and_fails_for_what_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    add_alice(db, dir.path());
    let before = json(&["list", "--db", db, "--user", "alice"]);

    // (arguments, what stderr must say)
    let cases: [(&[&str], &str); 5] = [
        (
            &["forget", "--db", db, "--user", "alice", "--session", "s9"],
            "no session \"s9\" for user \"alice\"",
        ),
        (
            &["forget", "--db", db, "--user", "carol", "--all"],
            "no user \"carol\" in this store",
        ),
        (
            &[
                "forget",
                "--db",
                db,
                "--user",
                "alice",
                "--memory",
                "0123456789abcdef",
            ],
            "no memory \"0123456789abcdef\" for user \"alice\"",
        ),
        (
            &["forget", "--db", db, "--user", "alice", "--memory", "Paris"],
            "\"Paris\" is not a memory id",
        ),
        (
            &["forget", "--db", db, "--user", "alice"],
            "--session <SESSION>|--memory <MEMORY>|--all",
        ),
    ];
    for (args, says) in cases {
        let err = fails(args);
        assert!(err.contains(says), "memforest {args:?}: {err}");
    }
    assert_eq!(json(&["list", "--db", db, "--user", "alice"]), before);

    // One memory: gone from get, list and search.
    let paris = before["memories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["text"] == "Alice: I live in Paris with my cat Miso.")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let v = json(&["forget", "--db", db, "--user", "alice", "--memory", &paris]);
    assert_eq!(v["forgot"], format!("memory {paris}"));
    assert_eq!(v["memories"], 1, "{v}");
    let err = fails(&["get", "--db", db, "--user", "alice", &paris]);
    assert!(err.contains("no memory"), "{err}");
    let found = json(&["search", "--db", db, "--user", "alice", "Paris cat Miso"]);
    assert!(
        !texts(&found, "hits").iter().any(|t| t.contains("Miso")),
        "{found}"
    );
    // Forgetting it again fails: it does not exist any more.
    fails(&["forget", "--db", db, "--user", "alice", "--memory", &paris]);

    // One message of a session, by id; then the rest of the session.
    let forget_in_s3 = |message: &'static str| {
        [
            "forget",
            "--db",
            db,
            "--user",
            "alice",
            "--session",
            "s3",
            "--message",
            message,
        ]
    };
    let err = fails(&forget_in_s3("m9"));
    assert!(
        err.contains("no message \"m9\" for user \"alice\""),
        "{err}"
    );
    let out = ok(&forget_in_s3("m2"));
    assert!(
        out.starts_with("forgot message m2 of session s3 of user \"alice\": 1 message and "),
        "{out}"
    );
    let out = ok(&["forget", "--db", db, "--user", "alice", "--session", "s3"]);
    assert!(
        out.starts_with("forgot session s3 of user \"alice\": 1 message and "),
        "{out}"
    );
    let listed = texts(&json(&["list", "--db", db, "--user", "alice"]), "memories");
    assert!(!listed.iter().any(|t| t.contains("Berlin")), "{listed:?}");
    assert!(listed.iter().any(|t| t.contains("nurse")), "{listed:?}");

    // Everything, counted.
    let v = json(&["forget", "--db", db, "--user", "alice", "--all"]);
    // s1 keeps its two messages (only a memory of it was forgotten), s2 its two.
    assert_eq!(v["messages"], 4, "{v}");
    assert!(v["memories"].as_u64().unwrap() >= 1, "{v}");
    let listed = json(&["list", "--db", db, "--user", "alice"]);
    assert_eq!(listed["memories"].as_array().unwrap().len(), 0);
    fails(&["forget", "--db", db, "--user", "alice", "--all"]);
}

#[test]
fn bad_arguments_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let bad_file = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad_file,
        "{\"role\": \"user\", \"content\": \"fine\"}\n{\"role\": \"robot\", \"content\": \"x\"}\n",
    )
    .unwrap();
    let bad_file = bad_file.to_str().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let missing = missing.to_str().unwrap();
    let not_a_store = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &[
                "add",
                "--db",
                db,
                "--user",
                "a",
                "--session",
                "s",
                "--time",
                "soon",
                "hi",
            ],
            "\"soon\" is not a time",
        ),
        (
            &[
                "add",
                "--db",
                db,
                "--user",
                "a",
                "--session",
                "s",
                "--file",
                bad_file,
            ],
            "bad.jsonl: not a messages JSONL file: line 2: role \"robot\"",
        ),
        (
            &[
                "add",
                "--db",
                db,
                "--user",
                "a",
                "--session",
                "s",
                "--file",
                missing,
            ],
            "missing.jsonl: No such file",
        ),
        (
            &[
                "add",
                "--db",
                db,
                "--user",
                "",
                "--session",
                "s",
                "hello there",
            ],
            "name",
        ),
        (
            &["get", "--db", db, "--user", "a", "xyz"],
            "\"xyz\" is not a memory id",
        ),
        (
            &["search", "--db", not_a_store, "--user", "a", "q"],
            "not a MemForest store",
        ),
        (
            &["list", "--db", db, "--user", "a", "--since", "later"],
            "\"later\" is not a time",
        ),
        (
            &["list", "--db", db, "--user", "a", "--limit", "0"],
            "0 is not in 1..=1000",
        ),
    ];
    for (args, says) in cases {
        let err = fails(args);
        assert!(err.contains(says), "memforest {args:?}: {err}");
    }
    // Nothing was stored by the failed adds.
    assert!(
        !std::path::Path::new(db).join("CURRENT").exists()
            || json(&["list", "--db", db, "--user", "a"])["memories"]
                .as_array()
                .unwrap()
                .is_empty()
    );
}

/// `update` and `history` by id; `search --as-of` sees the memory as it stood then;
/// `--agent` and `--session` scope `search` and `list`, `--speaker` scopes `search`; `--meta` and a file's `metadata`
/// come back from `messages`.
#[test]
fn update_history_as_of_scopes_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    // `memforest COMMAND --db DB --user alice REST...`
    let alice = |command: &'static str, rest: &[&str]| -> Vec<String> {
        [command, "--db", db, "--user", "alice"]
            .iter()
            .chain(rest)
            .map(|s| (*s).to_owned())
            .collect()
    };
    let run = |args: Vec<String>| json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let refused = |args: Vec<String>| fails(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let text = |args: Vec<String>| ok(&args.iter().map(String::as_str).collect::<Vec<_>>());

    let v = run(alice(
        "add",
        &[
            "--session",
            "trip",
            "--agent",
            "travel",
            "--meta",
            "channel=app",
            "--meta",
            "lang=en",
            "--speaker",
            "Alice",
            "--time",
            "2024-01-10",
            "I live in Paris and booked a hotel in Kyoto.",
        ],
    ));
    let paris = v["memories"][0]["id"].as_str().unwrap().to_owned();
    let file = dir.path().join("run.jsonl");
    std::fs::write(
        &file,
        "{\"content\": \"I booked a hotel in Boston for the marathon.\", \"time\": \"2024-03-01\", \"metadata\": {\"channel\": \"watch\"}}\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    run(alice(
        "add",
        &["--session", "run", "--agent", "coach", "--file", file],
    ));
    let e = refused(alice(
        "add",
        &["--session", "run", "--agent", "travel", "hi"],
    ));
    assert!(
        e.contains("belongs to agent \"coach\", not \"travel\""),
        "{e}"
    );
    let e = refused(alice("add", &["--session", "x", "--meta", "novalue", "hi"]));
    assert!(e.contains("--meta \"novalue\" is not KEY=VALUE"), "{e}");
    // An id of the automatic form would block the session's later messages: refused.
    let e = refused(alice(
        "add",
        &["--session", "trip", "--id", "trip#turn_4", "hi there"],
    ));
    assert!(e.contains("has the form trip#turn_N"), "{e}");
    // A message whose id is stored with other content is not stored, and the add fails.
    run(alice(
        "add",
        &["--session", "trip", "--id", "m7", "Kyoto was lovely."],
    ));
    let e = refused(alice(
        "add",
        &["--session", "trip", "--id", "m7", "Osaka too."],
    ));
    assert!(
        e.contains("not stored, an id already stored with other content: m7"),
        "{e}"
    );

    let v = run(alice("messages", &["--session", "trip"]));
    let m = &v["messages"][0];
    assert_eq!(m["metadata"]["channel"], "app", "{v}");
    assert_eq!(m["metadata"]["lang"], "en", "{v}");
    let v = run(alice("messages", &["--session", "run"]));
    assert_eq!(v["messages"][0]["metadata"]["channel"], "watch", "{v}");
    let out = text(alice("messages", &["--session", "trip"]));
    assert!(out.contains("channel = app"), "{out}");
    let e = refused(alice("messages", &["--session", "nope"]));
    assert!(e.contains("no session \"nope\" for user \"alice\""), "{e}");

    let hotel = |scope: &[&str]| {
        let mut args = scope.to_vec();
        args.push("hotel");
        texts(&run(alice("search", &args)), "hits")
    };
    // Nearest neighbours by meaning come back too: the hotel first, nothing of the
    // other agent's session.
    let travel = hotel(&["--agent", "travel"]);
    assert!(travel[0].contains("Kyoto"), "{travel:?}");
    assert!(travel.iter().all(|t| !t.contains("Boston")), "{travel:?}");
    let in_run = hotel(&["--session", "run"]);
    assert_eq!(in_run.len(), 1, "{in_run:?}");
    assert!(in_run[0].contains("Boston"), "{in_run:?}");
    let by_alice = hotel(&["--speaker", "alice"]);
    assert!(by_alice.iter().any(|t| t.contains("Kyoto")), "{by_alice:?}");
    assert!(
        by_alice.iter().all(|t| t.starts_with("Alice:")),
        "{by_alice:?}"
    );
    let listed = texts(&run(alice("list", &["--agent", "coach"])), "memories");
    assert_eq!(listed, in_run);

    let v = run(alice("update", &[&paris, "Alice lives in Berlin."]));
    assert_eq!(v["old"], paris.as_str(), "{v}");
    let berlin = v["new"]["id"].as_str().unwrap().to_owned();
    let v = run(alice("history", &[&berlin]));
    let versions = v["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "{v}");
    assert_eq!(versions[0]["id"], paris.as_str());
    assert!(versions[0]["valid_until"].is_string(), "{v}");
    assert!(versions[1]["valid_until"].is_null(), "{v}");
    let out = text(alice("history", &[&paris]));
    assert!(out.starts_with("2 versions of memory"), "{out}");
    assert!(out.contains("current  Alice lives in Berlin."), "{out}");

    let live = |extra: &[&str]| {
        let mut args = vec!["--latest-only"];
        args.extend_from_slice(extra);
        args.push("where does Alice live");
        run(alice("search", &args))["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let now = live(&[]);
    assert!(now.contains(&berlin) && !now.contains(&paris), "{now:?}");
    let then = live(&["--as-of", "2024-02-01"]);
    assert!(then.contains(&paris) && !then.contains(&berlin), "{then:?}");
    let e = refused(alice("update", &["00000000000000ff", "x"]));
    assert!(e.contains("no memory"), "{e}");
}

/// A user's memories come from one embedder: `--embedder none` makes a lexical user, which
/// every search reads lexically and a later `add` with the default embedder is refused for,
/// naming both; `search` and `query` take the embedder flags.
#[test]
fn a_user_keeps_the_embedder_it_was_made_with() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m");
    let db = db.to_str().unwrap();
    let add = ["add", "--db", db, "--user", "cy", "--session", "s1"];
    ok(&[
        &add[..],
        &["--embedder", "none", "I adopted a puppy from the shelter."],
    ]
    .concat());
    for flags in [&[][..], &["--embedder", "none"][..]] {
        let mut args = vec!["search", "--db", db, "--user", "cy"];
        args.extend_from_slice(flags);
        args.push("puppy shelter");
        assert!(texts(&json(&args), "hits")[0].contains("puppy"));
    }
    let query = [
        "query",
        "--db",
        db,
        "--user",
        "cy",
        "--embedder",
        "none",
        "puppy",
    ];
    assert!(ok(&query).contains("puppy"));
    let e = fails(&[&add[..], &["My sister lives in Berlin."]].concat());
    assert!(
        e.contains("embedded by \"none\"") && e.contains("minilm-l6-static-256"),
        "{e}"
    );
    let listed = json(&["list", "--db", db, "--user", "cy"]);
    assert_eq!(
        texts(&listed, "memories").len(),
        1,
        "nothing stored: {listed}"
    );
}
