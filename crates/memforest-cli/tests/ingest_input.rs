//! `memforest ingest` on bad or repeated input, through the
//! built binary: a bad entry fails naming file, line, session, turn and field before
//! anything is stored; a session or tenant seen again appends by turn id and the summary
//! says what was skipped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use std::path::Path;

use common::memforest;
use memforest_cli::import::{self, Format};
use serde_json::{json, Value};

/// Runs `ingest --json` of `file` (as `format`) into `db`; returns the summary and stderr.
fn ingest(db: &Path, format: &str, file: &Path) -> (Value, String) {
    let out = memforest(&[
        "ingest",
        "--db",
        db.to_str().unwrap(),
        "--format",
        format,
        file.to_str().unwrap(),
        "--json",
    ]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "ingest failed: {stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

/// Runs an `ingest` that must fail; returns its stderr.
fn ingest_fails(db: &Path, file: &Path) -> String {
    let out = memforest(&[
        "ingest",
        "--db",
        db.to_str().unwrap(),
        "--format",
        "jsonl",
        file.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "ingest of {file:?} succeeded");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Writes one JSON value per line.
fn jsonl(path: &Path, lines: &[Value]) {
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n")).unwrap();
}

fn line(tenant: &str, session: &str, turns: &[Value]) -> Value {
    json!({"tenant": tenant, "session": session, "start": "2023-05-08T13:56:00Z", "turns": turns})
}

fn say(text: &str) -> Value {
    json!({"role": "user", "speaker": "Alice", "text": text})
}

/// Turns stored per tenant, from `stats --json`.
fn stored_turns(db: &Path) -> Vec<(String, u64)> {
    let out = memforest(&["stats", "--db", db.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let n = t["keys"]["Turns"].as_u64().unwrap_or(0);
            (t["tenant"].as_str().unwrap().to_owned(), n)
        })
        .collect()
}

#[test]
fn an_oversized_turn_fails_naming_file_line_session_and_turn_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, file) = (dir.path().join("db"), dir.path().join("big.jsonl"));
    let mut big = say(&"x".repeat(2_638_891));
    big["id"] = json!("t-big");
    jsonl(
        &file,
        &[
            line("alice", "s1", &[say("I adopted a cat named Miso.")]),
            line("alice", "s2", &[say("Miso is grey."), big]),
            line("alice", "s3", &[say("Miso likes boxes.")]),
        ],
    );
    let err = ingest_fails(&db, &file);
    let want = format!(
        "{}: line 2: session \"s2\", turn 1 (id \"t-big\"): turn text of 2638891 bytes exceeds the 32768-byte limit",
        file.display()
    );
    assert!(err.contains(&want), "{err}");
    assert!(!db.exists(), "nothing may be stored");
    // The store takes the good lines afterwards, and later ingests keep working.
    let good = dir.path().join("good.jsonl");
    jsonl(
        &good,
        &[line("alice", "s1", &[say("I adopted a cat named Miso.")])],
    );
    let (v, _) = ingest(&db, "jsonl", &good);
    assert_eq!(v["turns"], 1);
    jsonl(
        &good,
        &[line("alice", "s4", &[say("Miso caught a mouse today.")])],
    );
    let (v, _) = ingest(&db, "jsonl", &good);
    assert_eq!(
        (v["turns"].as_u64(), v["cells_failed"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(stored_turns(&db), [("alice".to_owned(), 2)]);
}

#[test]
fn a_bad_tenant_on_a_later_line_fails_by_line_and_field_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, file) = (dir.path().join("db"), dir.path().join("t.jsonl"));
    let good = [
        line("alice", "s1", &[say("I adopted a cat named Miso.")]),
        line("bob", "b1", &[say("My sister moved to Lisbon.")]),
    ];
    for (tenant, want) in [
        (
            "a\u{0}b",
            "line 3: tenant name contains a NUL byte at byte offset 1",
        ),
        (
            &*"x".repeat(70_000),
            "line 3: tenant name of 70000 bytes exceeds the 1024-byte limit",
        ),
        (" \t ", "line 3: user id is only whitespace"),
    ] {
        let mut lines = good.to_vec();
        lines.push(line(tenant, "s9", &[say("Hello there, friend.")]));
        jsonl(&file, &lines);
        let err = ingest_fails(&db, &file);
        assert!(
            err.contains(&format!("{}: {want}", file.display())),
            "{err}"
        );
        assert!(!db.exists(), "lines 1-2 must not be stored");
    }
    // So is the session that holds the texts of `Memory::update`.
    let mut lines = good.to_vec();
    lines.push(line("carol", "memforest:updates", &[say("Fine.")]));
    jsonl(&file, &lines);
    let err = ingest_fails(&db, &file);
    assert!(
        err.contains("line 3: session \"memforest:updates\" is reserved"),
        "{err}"
    );
    assert!(!db.exists());
    // A session id or turn id over its limit is named the same way.
    let mut long_id = say("Hello there, friend.");
    long_id["id"] = json!("i".repeat(2_000));
    let mut lines = good.to_vec();
    lines.push(line("carol", "c1", &[say("Fine."), long_id]));
    jsonl(&file, &lines);
    let err = ingest_fails(&db, &file);
    assert!(
        err.contains("line 3: session \"c1\", turn 1 (id \"iiii")
            && err.contains("turn id of 2000 bytes exceeds the 1024-byte limit"),
        "{err}"
    );
    assert!(!db.exists());
}

#[test]
fn a_session_on_several_jsonl_lines_keeps_every_turn_and_a_rerun_is_a_noop() {
    let dir = tempfile::tempdir().unwrap();
    let (db, file) = (dir.path().join("db"), dir.path().join("s.jsonl"));
    jsonl(
        &file,
        &[
            line(
                "alice",
                "s1",
                &[say("I adopted a cat named Miso."), say("Miso is grey.")],
            ),
            line("alice", "s2", &[say("I play the violin.")]),
            line(
                "alice",
                "s1",
                &[
                    say("Miso knocked a vase over."),
                    say("Miso likes boxes."),
                    say("Miso sleeps a lot."),
                ],
            ),
        ],
    );
    let (v, err) = ingest(&db, "jsonl", &file);
    assert_eq!(v["turns"], 6, "{v}");
    assert_eq!(v["turns_duplicate"], 0);
    assert!(!err.contains("skipped"), "{err}");
    assert_eq!(stored_turns(&db), [("alice".to_owned(), 6)]);
    // Every turn of the second s1 line is there.
    let out = memforest(&[
        "query",
        "--db",
        db.to_str().unwrap(),
        "--tenant",
        "alice",
        "--json",
        "what did Miso knock over?",
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("vase"));
    // The same file again: every turn is a duplicate, nothing is stored twice.
    let (v, err) = ingest(&db, "jsonl", &file);
    assert_eq!(
        (v["turns"].as_u64(), v["turns_duplicate"].as_u64()),
        (Some(0), Some(6))
    );
    assert!(err.contains("6 turns skipped"), "{err}");
    assert_eq!(stored_turns(&db), [("alice".to_owned(), 6)]);
}

/// A LoCoMo sample `conv-x` whose one session has turns `(dia_id, text)`.
fn locomo_sample(turns: &[(&str, &str)]) -> Value {
    let turns: Vec<Value> = turns
        .iter()
        .map(|(id, text)| json!({"speaker": "Caroline", "dia_id": id, "text": text}))
        .collect();
    json!({
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns
        },
        "qa": []
    })
}

#[test]
fn a_repeated_locomo_sample_id_is_one_tenant_and_skipped_turns_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (db, file) = (dir.path().join("db"), dir.path().join("locomo.json"));
    let doc = json!([
        locomo_sample(&[
            ("D1:1", "I went to a support group."),
            ("D1:2", "I painted a sunrise.")
        ]),
        locomo_sample(&[
            ("D1:1", "I went to a support group."),
            ("D1:2", "I painted a sunset."),
            ("D1:3", "I adopted a dog."),
        ]),
    ]);
    std::fs::write(&file, doc.to_string()).unwrap();
    let (v, err) = ingest(&db, "locomo", &file);
    assert_eq!(v["tenants"], 1, "{v}");
    assert_eq!(v["turns"], 3);
    assert_eq!(v["turns_duplicate"], 1);
    assert_eq!(v["turns_conflicting"], 1);
    assert_eq!(v["conflicts"], json!(["conv-x/session_1/D1:2"]));
    assert!(v["warnings"].as_u64().unwrap() >= 1);
    assert!(
        err.contains("1 turns skipped: their ids were already stored with different text")
            && err.contains("conv-x/session_1/D1:2"),
        "{err}"
    );
    assert_eq!(stored_turns(&db), [("conv-x".to_owned(), 3)]);
}

#[test]
fn a_repeated_longmemeval_session_is_appended_not_renamed_or_dropped() {
    let doc = json!([
        {
            "question_id": "q1",
            "question": "Which bikes?",
            "answer": "two",
            "haystack_session_ids": ["s1", "s1"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 02:21"],
            "haystack_sessions": [
                [{"role": "user", "content": "I have a road bike."}],
                [{"role": "user", "content": "I bought a gravel bike.", "has_answer": true}]
            ]
        },
        {
            "question_id": "q1",
            "question": "Which bikes again?",
            "answer": "two",
            "haystack_session_ids": ["s2"],
            "haystack_dates": ["2023/05/22 (Mon) 02:21"],
            "haystack_sessions": [[{"role": "user", "content": "I sold nothing."}]]
        }
    ]);
    let d = import::parse(
        Format::Longmemeval,
        Path::new("lme.json"),
        doc.to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(d.tenants.len(), 1);
    let ids: Vec<(&str, Vec<&str>)> = d.tenants[0]
        .sessions
        .iter()
        .map(|s| {
            let turns = s.turns.iter().map(|t| t.id.as_deref().unwrap()).collect();
            (s.id.as_str(), turns)
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("s1", vec!["s1#turn_0"]),
            ("s1", vec!["s1#turn_1"]),
            ("s2", vec!["s2#turn_0"])
        ]
    );
    assert_eq!(d.questions[0].evidence_turns, ["s1#turn_1"]);
    assert_eq!(
        d.warnings.get("repeated session id (turns appended to it)"),
        1
    );
    assert_eq!(
        d.warnings
            .get("repeated question_id (sessions appended to the same tenant)"),
        1
    );
}
