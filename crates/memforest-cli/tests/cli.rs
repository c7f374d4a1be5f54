//! End-to-end: the built `memforest` binary on tiny datasets, through std::process.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use std::path::{Path, PathBuf};

use common::{data, fails, ok};

fn ingest_sessions(db: &str) {
    let file = data("sessions.jsonl");
    let file = file.to_str().unwrap();
    ok(&["ingest", "--db", db, "--format", "jsonl", file, "--json"]);
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn ingest_query_stats_verify() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let file = data("sessions.jsonl");
    let out = ok(&[
        "ingest",
        "--db",
        db,
        "--format",
        "jsonl",
        file.to_str().unwrap(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["turns"], 4);
    assert_eq!(v["tenants"], 2);
    assert!(v["facts"].as_u64().unwrap() > 0);

    let out = ok(&[
        "query",
        "--db",
        db,
        "--tenant",
        "alice",
        "--json",
        "what is my cat called?",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let facts = v["facts"].as_array().unwrap();
    assert!(!facts.is_empty());
    assert!(facts
        .iter()
        .any(|f| f["text"].as_str().unwrap().contains("Miso")));
    assert!(v["context"].as_str().unwrap().contains("Miso"));
    // ids are the 16-hex-digit strings get and forget take; validity and time are there
    let miso = facts
        .iter()
        .find(|f| f["text"].as_str().unwrap().contains("Miso"))
        .unwrap();
    assert_eq!(miso["id"].as_str().unwrap().len(), 16, "{miso}");
    assert_eq!(miso["current"], true, "{miso}");
    assert!(
        miso["start"].is_string() && miso["valid_until"].is_null(),
        "{miso}"
    );
    assert_eq!(miso["sources"][0]["session"], "s1", "{miso}");
    // tenants are isolated
    let out = ok(&["query", "--db", db, "--tenant", "bob", "--json", "cat Miso"]);
    assert!(!out.contains("Miso"), "{out}");

    let out = ok(&["stats", "--db", db, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let tenants = v["tenants"].as_array().unwrap();
    assert_eq!(tenants.len(), 2);
    let alice = tenants.iter().find(|t| t["tenant"] == "alice").unwrap();
    assert_eq!(alice["keys"]["Turns"], 3);
    let turn_bytes = alice["bytes"]["Turns"].as_u64().unwrap();
    assert!(
        turn_bytes > 3 * 8,
        "3 turns' keys and texts: {turn_bytes} bytes"
    );
    let memory = &alice["memory"];
    assert_eq!(memory["messages"], 3);
    assert_eq!(memory["memories"], alice["keys"]["Facts"]);
    assert!(memory["memories"].as_u64().unwrap() > 0);
    assert_eq!(memory["sessions"], 2);
    assert_eq!(memory["trees"], alice["keys"]["Trees"]);
    let text = ok(&["stats", "--db", db]);
    assert!(text.contains("alice: 2 sessions, 3 messages, "), "{text}");

    let out = ok(&["verify", "--db", db, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["trees"].as_u64().unwrap() > 0);
    assert!(v["wal_batches"].as_u64().unwrap() > 0);

    let out = ok(&["wal", "check", db, "--json"]);
    assert!(out.contains("\"clean\": true"));
    let out = ok(&["wal", "dump", db]);
    assert!(out.contains("alice Turns"), "{out}");
}

#[test]
fn verify_names_file_and_offset_of_a_flipped_byte() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let dbs = db.to_str().unwrap();
    ingest_sessions(dbs);
    ok(&["compact", "--db", dbs]);
    ok(&["verify", "--db", dbs]);
    let sst = files(&db)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .expect("a segment file after compact");
    let mut bytes = std::fs::read(&sst).unwrap();
    // the first data block holds turn text; flip a byte in it
    bytes[40] ^= 0x55;
    std::fs::write(&sst, &bytes).unwrap();
    let err = fails(&["verify", "--db", dbs]);
    let name = sst.file_name().unwrap().to_str().unwrap();
    assert!(err.contains(name), "{err}");
    assert!(err.contains("offset"), "{err}");
}

#[test]
fn verify_names_a_damaged_wal_record() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let dbs = db.to_str().unwrap();
    ingest_sessions(dbs);
    let wal = files(&db.join("wal"))
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let mut bytes = std::fs::read(&wal).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xFF;
    std::fs::write(&wal, &bytes).unwrap();
    let err = fails(&["wal", "check", dbs]);
    assert!(
        err.contains(wal.file_name().unwrap().to_str().unwrap()),
        "{err}"
    );
    assert!(err.contains("offset"), "{err}");
    let err = fails(&["verify", "--db", dbs]);
    assert!(err.contains("offset"), "{err}");
}

#[test]
fn forget_all_then_purge_leaves_no_byte_of_the_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let dbs = db.to_str().unwrap();
    ingest_sessions(dbs);
    let text = ok(&["compact", "--db", dbs]);
    assert!(text.starts_with("compacted\n"), "{text}");
    assert!(!text.contains('{'), "text for people, not JSON: {text}");
    let all: Vec<u8> = files(&db)
        .iter()
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(
        contains(&all, b"Lisbon"),
        "bob's text is stored before the forget"
    );
    ok(&["forget", "--db", dbs, "--tenant", "bob", "--all"]);
    let text = ok(&["compact", "--db", dbs, "--purge"]);
    assert!(text.starts_with("purged: "), "{text}");
    for p in files(&db) {
        let bytes = std::fs::read(&p).unwrap();
        for needle in [&b"Lisbon"[..], b"Carla", b"chemistry"] {
            assert!(
                !contains(&bytes, needle),
                "{} still holds {:?}",
                p.display(),
                needle
            );
        }
    }
    // alice is untouched
    let out = ok(&["query", "--db", dbs, "--tenant", "alice", "--json", "cat"]);
    assert!(out.contains("Miso"));
    ok(&["verify", "--db", dbs]);
}

#[test]
fn bad_inputs_fail_with_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let dbs = db.to_str().unwrap();
    let missing = dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let bad = data("bad_line2.jsonl");
    let bad = bad.to_str().unwrap();
    let lme = data("longmemeval_defects.json");
    let lme = lme.to_str().unwrap();
    let not_a_store = dir.path().to_str().unwrap();
    // (arguments, what stderr must name)
    let cases: [(&[&str], &str); 8] = [
        (
            &["ingest", "--db", dbs, "--format", "locomo", missing],
            "missing.json",
        ),
        (&["ingest", "--db", dbs, "--format", "jsonl", bad], "line 2"),
        (
            &["ingest", "--db", dbs, "--format", "locomo", lme],
            "not a locomo file",
        ),
        (&["ingest", "--db", dbs, "--format", "csv", lme], "csv"),
        (
            &["query", "--db", not_a_store, "--tenant", "a", "q"],
            "not a MemForest store",
        ),
        (&["verify", "--db", missing], "not a MemForest store"),
        (
            &["eval", "--db", dbs, "--format", "jsonl", bad],
            "locomo or longmemeval",
        ),
        (
            &[
                "ingest",
                "--db",
                dbs,
                "--format",
                "jsonl",
                "--summarizer",
                "openai",
                lme,
            ],
            "--llm-url",
        ),
    ];
    for (args, names) in cases {
        let err = fails(args);
        assert!(err.contains(names), "memforest {args:?}: {err}");
    }
}

/// A writer holds the lock: writes are refused, reads (read-only opens) still work.
#[test]
fn a_locked_store_refuses_writes_and_serves_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let dbs = db.to_str().unwrap();
    ingest_sessions(dbs);
    let held = memforest_engine::Db::open(&db, memforest_engine::Options::default()).unwrap();
    let out = ok(&["stats", "--db", dbs]);
    assert!(out.contains("tenants: 2"), "{out}");
    let out = ok(&["query", "--db", dbs, "--tenant", "alice", "--json", "cat"]);
    assert!(out.contains("Miso"), "{out}");
    ok(&["verify", "--db", dbs]);
    let err = fails(&["forget", "--db", dbs, "--tenant", "bob", "--all"]);
    assert!(err.contains("locked"), "{err}");
    let file = data("sessions.jsonl");
    let err = fails(&[
        "ingest",
        "--db",
        dbs,
        "--format",
        "jsonl",
        file.to_str().unwrap(),
    ]);
    assert!(err.contains("locked"), "{err}");
    held.close().unwrap();
    ok(&["stats", "--db", dbs]);
}

/// `memforest eval` of the LongMemEval defects file into store `db`, with `extra`
/// arguments; its output.
fn eval_defects(db: &std::path::Path, extra: &[&str]) -> String {
    let file = data("longmemeval_defects.json");
    let mut args = vec![
        "eval",
        "--db",
        db.to_str().unwrap(),
        "--format",
        "longmemeval",
        file.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ok(&args)
}

#[test]
fn eval_reports_memforest_and_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let out = eval_defects(&dir.path().join("db"), &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["k"], 10);
    // q2_abs is an abstention question: skipped
    assert_eq!(v["questions"], 1);
    for key in [
        "recall_at_k",
        "baseline_recall_at_k",
        "session_recall_at_k",
        "baseline_session_recall_at_k",
    ] {
        let all = v[key]["all"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&all), "{key} = {all}");
    }
    // two tiny sessions: everything fits in the top 10 for both
    assert_eq!(v["baseline_session_recall_at_k"]["all"], 1.0);
}

#[test]
fn eval_says_when_the_store_has_no_vectors_for_its_embedder() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let lexical = eval_defects(&db, &["--embedder", "none"]);
    assert!(!lexical.contains("without vectors"), "{lexical}");
    // Opened with the default embedder, the users ingested without one are lexical.
    let default = eval_defects(&db, &[]);
    assert!(
        default.contains("note: 2 users were stored without vectors"),
        "{default}"
    );
}
