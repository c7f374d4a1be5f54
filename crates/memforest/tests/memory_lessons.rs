//! Field regressions from agent-memory systems: one scenario per test, named by the
//! behaviour it checks; each doc comment cites the upstream issue that showed the failure.
//! `docs/reliability.md` maps each failure to its test, including those living elsewhere.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::cast_possible_truncation,
    reason = "test code; counts are small"
)]

mod recall_common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;

use memforest::memory::record::{self, FactRecord, SessionRecord};
use memforest::memory::stats::CallKind;
use memforest::recall::Query;
use memforest::{schema::Table, Memory, MemoryError, Options};
use memforest_engine::{Durability, Error, TenantId};
use recall_common::{options, session};

const CHILD_ENV: &str = "MEMFOREST_LESSON_CHILD";

fn tenant(name: &str) -> TenantId {
    TenantId::new(name).unwrap()
}

fn facts(db: &Memory, t: &TenantId) -> Vec<(Vec<u8>, FactRecord)> {
    db.db()
        .scan_prefix(t, Table::Facts.into(), b"", None)
        .unwrap()
        .map(|r| {
            let (k, v) = r.unwrap();
            (k.to_vec(), record::decode(&v, "fact").unwrap())
        })
        .collect()
}

fn session_stored(db: &Memory, t: &TenantId, id: &str) -> Option<SessionRecord> {
    db.db()
        .get(
            t,
            Table::Sessions.into(),
            &record::prefixed(b's', id.as_bytes()),
        )
        .unwrap()
        .map(|v| record::decode(&v, "session").unwrap())
}

/// The texts of the facts a query for `text` returns (`latest_only` as given).
fn found(db: &Memory, t: &TenantId, text: &str, latest_only: bool) -> Vec<String> {
    let q = Query {
        latest_only,
        ..Query::new(text)
    };
    let r = db.query(t, &q).unwrap();
    r.facts.into_iter().map(|f| f.text).collect()
}

/// Runs this test binary's `test` as a child with `CHILD_ENV=role:dir`.
fn spawn_child(test: &str, role: &str, dir: &std::path::Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{role}:{}", dir.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The child role and directory, when this process is a child.
fn child_role() -> Option<(String, String)> {
    let v = std::env::var(CHILD_ENV).ok()?;
    let (role, dir) = v.split_once(':')?;
    Some((role.to_owned(), dir.to_owned()))
}

/// Seen in mem0 #1674 (adding the exact same text twice made the system delete the
/// memory). The same fact text from a second session, and the same session ingested
/// again, leave exactly one fact with its text unchanged; re-ingesting the session
/// changes nothing at all.
#[test]
fn identical_text_twice_keeps_one_unchanged_fact() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = tenant("t");
    let text = "Alice keeps bees on her roof";
    db.ingest_session(&t, &session("a", 0, &[text])).unwrap();
    let once = facts(&db, &t);
    assert_eq!(once.len(), 1);
    db.ingest_session(&t, &session("b", 1, &[text])).unwrap();
    let twice = facts(&db, &t);
    assert_eq!(twice.len(), 1, "the duplicate neither adds nor deletes");
    assert_eq!(twice[0].0, once[0].0);
    assert_eq!(twice[0].1.text, text);
    // Background summary regeneration writes too: let it finish before counting.
    db.flush_summaries().unwrap();
    let seqno = db.db().seqno();
    db.ingest_session(&t, &session("b", 1, &[text])).unwrap();
    assert_eq!(
        db.db().seqno(),
        seqno,
        "re-ingesting a stored session writes nothing"
    );
    assert_eq!(facts(&db, &t), twice);
    assert_eq!(found(&db, &t, "bees roof", false), vec![text.to_owned()]);
}

/// Seen in mem0 #4536 ("I love X" then "I hate X" deleted the old memory and added
/// nothing). The contradiction supersedes the old value, which stays in history with its
/// end time; the slot is never empty.
#[test]
fn contradiction_supersedes_and_never_empties_the_slot() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = tenant("t");
    db.ingest_session(
        &t,
        &session("a", 0, &["Alice loves jazz||Alice|jazz opinion"]),
    )
    .unwrap();
    db.ingest_session(
        &t,
        &session("b", 3, &["Alice hates jazz||Alice|jazz opinion"]),
    )
    .unwrap();
    let all = db.query(&t, &Query::new("jazz")).unwrap();
    let love = all.facts.iter().find(|f| f.text.contains("loves")).unwrap();
    let hate = all.facts.iter().find(|f| f.text.contains("hates")).unwrap();
    assert!(!love.current && love.valid_until.is_some(), "{love:?}");
    assert!(hate.current && hate.valid_until.is_none(), "{hate:?}");
    assert_eq!(
        found(&db, &t, "jazz", true),
        vec!["Alice hates jazz".to_owned()],
        "the latest state is the new value, not nothing"
    );
    assert_eq!(facts(&db, &t).len(), 2, "nothing erased");
}

/// Seen in mem0 #4473 (the local store was wiped on every start; #6075: a wrong volume
/// lost everything). A child process ingests and closes; a new process opening the same
/// directory finds every session, fact and query result, and `verify` passes.
#[test]
fn everything_survives_close_and_reopen_in_a_new_process() {
    let texts: Vec<String> = (0..5)
        .map(|i| format!("Alice planted {i} lemon trees in the orchard"))
        .collect();
    if let Some((role, dir)) = child_role() {
        if role == "ingest" {
            let db = Memory::open_with(&dir, options(true, None)).unwrap();
            for (i, text) in texts.iter().enumerate() {
                let s = session(&format!("s{i}"), i as i64, &[text]);
                db.ingest_session(&tenant("t"), &s).unwrap();
            }
            db.close().unwrap();
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let status = spawn_child(
        "everything_survives_close_and_reopen_in_a_new_process",
        "ingest",
        dir.path(),
    )
    .wait()
    .unwrap();
    assert!(status.success());
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = tenant("t");
    for i in 0..5 {
        assert!(session_stored(&db, &t, &format!("s{i}")).is_some(), "s{i}");
    }
    let mut stored: Vec<String> = facts(&db, &t).into_iter().map(|(_, f)| f.text).collect();
    stored.sort();
    assert_eq!(stored, texts);
    assert!(found(&db, &t, "lemon trees orchard", false).len() == 5);
    assert!(db.verify().unwrap().trees > 0);
}

/// Seen in mem0 #4892 (~20 concurrent writes corrupted the embedded vector index).
/// Eight ingest threads and two query threads run together; afterwards `verify` passes
/// (every tree's invariants, every file's checksums) and every fact is found through the
/// index by its own unique word, so the index agrees with the primary records.
#[test]
fn concurrent_ingest_and_queries_leave_every_index_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Memory::open_with(dir.path(), options(true, None)).unwrap());
    let t = tenant("t");
    let word = |w: usize, i: usize| format!("zq{w}x{i}");
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (db, t) = (Arc::clone(&db), t.clone());
            thread::spawn(move || {
                for i in 0..6 {
                    let text = format!("Alice bought a {} at the market", word(w, i));
                    let s = session(&format!("w{w}s{i}"), (w * 10 + i) as i64, &[&text]);
                    db.ingest_session(&t, &s).unwrap();
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (db, t) = (Arc::clone(&db), t.clone());
            thread::spawn(move || {
                for _ in 0..30 {
                    db.query(&t, &Query::new("market")).unwrap();
                }
            })
        })
        .collect();
    for h in writers.into_iter().chain(readers) {
        h.join().unwrap();
    }
    db.flush_summaries().unwrap();
    let report = db.verify().unwrap();
    assert!(report.trees > 0);
    assert_eq!(facts(&db, &t).len(), 48);
    for w in 0..8 {
        for i in 0..6 {
            let hits = found(&db, &t, &word(w, i), false);
            assert!(
                hits.first().is_some_and(|h| h.contains(&word(w, i))),
                "{} not found first: {hits:?}",
                word(w, i)
            );
        }
    }
}

/// Seen in graphiti #467 (token use invisible). Model calls are counted per tenant and per
/// derivation kind: extraction calls follow each tenant's own ingest, summary calls are
/// counted apart, and one tenant's work never shows under another.
#[test]
fn model_calls_are_counted_per_tenant_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let (a, b) = (tenant("a"), tenant("b"));
    for i in 0..6 {
        let text = format!("Alice ran {i} miles along the canal");
        db.ingest_session(&a, &session(&format!("s{i}"), i, &[&text]))
            .unwrap();
    }
    db.ingest_session(&b, &session("s0", 0, &["Bob fixed his bike"]))
        .unwrap();
    db.flush_summaries().unwrap();
    let usage = db.memory_stats().usage;
    let calls = |t: &str, k: CallKind| usage.get(t).and_then(|u| u.get(&k)).map_or(0, |u| u.calls);
    assert_eq!(calls("a", CallKind::Extraction), 6, "{usage:?}");
    assert_eq!(calls("b", CallKind::Extraction), 1, "{usage:?}");
    assert!(calls("a", CallKind::Summary) > 0, "{usage:?}");
    // The default in-process embedder: a call per extracted cell and per summary, each
    // under its own tenant.
    assert!(calls("a", CallKind::Embedding) >= 6, "{usage:?}");
    assert!(calls("b", CallKind::Embedding) >= 1, "{usage:?}");
    assert!(calls("b", CallKind::Embedding) < calls("a", CallKind::Embedding));
    assert_eq!(usage.len(), 2, "only the two tenants: {usage:?}");
}

/// Seen in graphiti #1728, #1841 (invalidation retired unrelated facts about the same
/// person). A new value supersedes only the same subject and attribute: the same person's
/// other attribute and another person's same attribute stay current.
#[test]
fn supersede_stays_within_subject_and_attribute() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    let t = tenant("t");
    let s0 = [
        "Alice works as a nurse||Alice|job",
        "Alice lives in Porto||Alice|home city",
        "Bob works as a pilot||Bob|job",
    ];
    db.ingest_session(&t, &session("a", 0, &s0)).unwrap();
    db.ingest_session(&t, &session("b", 2, &["Alice works as a chef||Alice|job"]))
        .unwrap();
    let all = db.query(&t, &Query::new("Alice Bob works lives")).unwrap();
    let current = |needle: &str| {
        all.facts
            .iter()
            .find(|f| f.text.contains(needle))
            .unwrap_or_else(|| panic!("{needle} not found"))
            .current
    };
    assert!(
        !current("nurse"),
        "the same subject and attribute is superseded"
    );
    assert!(current("chef"));
    assert!(
        current("Porto"),
        "another attribute of the same person stays"
    );
    assert!(
        current("pilot"),
        "the same attribute of another person stays"
    );
}

/// Seen in cognee #2717 ("database is locked" under parallel ingest). Sixteen threads
/// ingest into one store and one tenant at once: no call fails, every session is stored.
#[test]
fn parallel_ingest_threads_on_one_store_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Memory::open_with(dir.path(), options(true, None)).unwrap());
    let t = tenant("t");
    let handles: Vec<_> = (0..16)
        .map(|w| {
            let (db, t) = (Arc::clone(&db), t.clone());
            thread::spawn(move || {
                for i in 0..4 {
                    let text = format!("Worker {w} logged entry {i}");
                    let s = session(&format!("p{w}-{i}"), i, &[&text]);
                    db.ingest_session(&t, &s).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for w in 0..16 {
        for i in 0..4 {
            let id = format!("p{w}-{i}");
            assert_eq!(
                session_stored(&db, &t, &id).map(|s| s.turns),
                Some(1),
                "{id}"
            );
        }
    }
    assert_eq!(facts(&db, &t).len(), 64);
}

/// Seen in cognee #4394 (two processes on one dataset created duplicate keys). While a
/// child process has the store open, opening it here fails with `Error::Locked` naming
/// the lock file; once the child is gone the store opens.
#[test]
fn a_second_process_gets_a_clear_lock_error() {
    if let Some((role, dir)) = child_role() {
        if role == "hold" {
            let _db = Memory::open_with(&dir, Options::default()).unwrap();
            println!("child-holds-the-store");
            thread::sleep(std::time::Duration::from_secs(20));
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_child(
        "a_second_process_gets_a_clear_lock_error",
        "hold",
        dir.path(),
    );
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // libtest prints the test's name on the same line before the child's output.
    let opened = lines.any(|l| l.unwrap().contains("child-holds-the-store"));
    assert!(opened, "the child opened the store");
    match Memory::open_with(dir.path(), Options::default()) {
        Err(MemoryError::Engine(e @ Error::Locked { .. })) => {
            assert!(
                e.to_string().contains("locked by another open handle"),
                "{e}"
            );
        }
        other => panic!("expected Error::Locked, got {other:?}"),
    }
    child.kill().unwrap();
    child.wait().unwrap();
    Memory::open_with(dir.path(), Options::default()).unwrap();
}

/// Seen in mempalace #525 (index files grew to hundreds of GB after many upserts).
/// Rewriting the same 200 ids 40 times keeps the files within a small multiple of the live
/// data once compaction has run, instead of growing with every rewrite.
#[test]
fn space_stays_bounded_under_rewrites_of_the_same_ids() {
    let dir = tempfile::tempdir().unwrap();
    let opts = memforest_engine::Options {
        memtable_size: 32 << 10,
        l0_compaction_trigger: 2,
        max_bytes_for_level_base: 128 << 10,
        target_file_size: 32 << 10,
        ..memforest_engine::Options::default()
    };
    let db = memforest_engine::Db::open(dir.path(), opts).unwrap();
    let t = tenant("t");
    let live = 200 * 300u64;
    for round in 0..40u32 {
        for id in 0..200u32 {
            let value = format!("{round:04}{}", "v".repeat(296));
            db.put(
                &t,
                Table::Facts.into(),
                &id.to_be_bytes(),
                value.as_bytes(),
                Durability::Buffered,
            )
            .unwrap();
        }
    }
    db.compact_all().unwrap();
    let on_disk: u64 = db.stats().levels.iter().map(|l| l.bytes).sum();
    assert!(
        on_disk < 2 * live,
        "{on_disk} bytes of segment files for {live} live bytes (written {} times)",
        40
    );
    let v = db
        .get(&t, Table::Facts.into(), &7u32.to_be_bytes())
        .unwrap()
        .unwrap();
    assert!(v.starts_with(b"0039"));
}

/// Seen in mempalace #1581 (a corrupted derived index could not be repaired). Every
/// derived table is dropped; after a reopen queries find every fact again (the index is
/// rebuilt from the primary fact records) and `verify` passes.
#[test]
fn derived_tables_rebuild_from_the_primary_records() {
    let dir = tempfile::tempdir().unwrap();
    let t = tenant("t");
    {
        let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
        for i in 0..5 {
            let text = format!("Alice visited museum number {i} kq{i}");
            db.ingest_session(&t, &session(&format!("s{i}"), i, &[&text]))
                .unwrap();
        }
        db.flush_summaries().unwrap();
        db.drop_derived(Durability::SyncData).unwrap();
        for table in Table::DERIVED {
            let left = db.db().scan_prefix(&t, table.into(), b"", None).unwrap();
            assert_eq!(left.count(), 0);
        }
        db.close().unwrap();
    }
    let db = Memory::open_with(dir.path(), options(true, None)).unwrap();
    for i in 0..5 {
        let hits = found(&db, &t, &format!("kq{i}"), false);
        assert!(
            hits.first().is_some_and(|h| h.contains(&format!("kq{i}"))),
            "{hits:?}"
        );
    }
    db.flush_summaries().unwrap();
    assert!(db.verify().unwrap().trees > 0);
}
