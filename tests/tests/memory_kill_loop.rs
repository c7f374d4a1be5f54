//! Kill loop over the whole write path: a child process (this test binary re-executed)
//! ingests numbered sessions into a database with a 16 KiB memtable (so memtable flushes
//! and compactions run all the time) and the extractive summarizer (so tree summaries are
//! regenerated in the background), printing `ack <i>` once `ingest_session` returned. The
//! parent SIGKILLs it at a random moment, reopens the directory, and checks:
//!
//! - `Db::verify` passes (manifest = live version, level invariants, every segment file's
//!   checksums, the WAL, every MemTree's invariants);
//! - every acknowledged session is stored with each of its turns exactly once, and its
//!   own fact exists exactly once with that session among its occurrences exactly once;
//! - `flush_summaries` completes (the dirty trees a kill left are summarized), after which
//!   `Db::verify` passes again.
//!
//! The same directory is used for every round, so each round also recovers the torn state
//! of the previous ones.
//!
//! Iterations: `MEMFOREST_KILL_LOOP_ITERS` (default 10 in CI). Long run:
//! `MEMFOREST_KILL_LOOP_ITERS=200 cargo test --release -p memforest-tests --test
//! memory_kill_loop -- --nocapture`.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memforest::memory::record::{self, FactRecord, SessionRecord, TurnRecord};
use memforest::memory::session::{Role, Session, Turn};
use memforest::memory::summarize::ExtractiveSummarizer;
use memforest::memory::MemoryOptions;
use memforest::{schema::Table, Memory, Options};
use memforest_engine::TenantId;
use rand::Rng;

const CHILD_ENV: &str = "MEMFOREST_KILL_LOOP_DIR";
const FROM_ENV: &str = "MEMFOREST_KILL_LOOP_FROM";
/// Microseconds in a day; sessions are a day apart from 2023-03-01.
const DAY: i64 = 86_400_000_000;
const T0: i64 = 1_677_628_800_000_000;

fn options() -> Options {
    Options {
        engine: memforest_engine::Options {
            memtable_size: 16 << 10,
            l0_compaction_trigger: 2,
            l0_stop_writes_trigger: 12,
            max_bytes_for_level_base: 64 << 10,
            target_file_size: 16 << 10,
            ..memforest_engine::Options::default()
        },
        memory: MemoryOptions {
            summarizer: Arc::new(ExtractiveSummarizer::default()),
            extract_pool: 1,
            summary_pool: 2,
            ..MemoryOptions::default()
        },
    }
}

fn tenant() -> TenantId {
    TenantId::new("kill-loop").unwrap()
}

/// Session `i`'s turns: its own fact (mentions `i`), a fact shared by every session (so
/// deduplication across sessions is exercised), and filler.
fn texts(i: u64) -> [String; 4] {
    [
        format!("I adopted a parrot named Pixel{i} on day {i}."),
        format!("Pixel{i} sounds lovely. How old is Pixel{i}?"),
        "I go running along the river every Saturday morning.".to_owned(),
        "Running by the river is a great routine.".to_owned(),
    ]
}

fn session(i: u64) -> Session {
    let start = T0 + i64::try_from(i).unwrap() * DAY;
    Session {
        id: format!("s{i}"),
        start,
        turns: texts(i)
            .iter()
            .enumerate()
            .map(|(n, text)| {
                let (role, name) = if n % 2 == 0 {
                    (Role::User, "Alice")
                } else {
                    (Role::Assistant, "Bot")
                };
                Turn {
                    time: Some(start + i64::try_from(n).unwrap() * 60_000_000),
                    ..Turn::new(role, name, text.as_str())
                }
            })
            .collect(),
    }
}

/// The child: ingests sessions `from..` for at most 20 s, printing `ack <i>` after each.
fn child(dir: &str) {
    let from: u64 = std::env::var(FROM_ENV).unwrap().parse().unwrap();
    let db = Memory::open_with(dir, options()).unwrap();
    let start = Instant::now();
    for i in (from..).take_while(|_| start.elapsed() < Duration::from_secs(20)) {
        db.ingest_session(&tenant(), &session(i)).unwrap();
        println!("ack {i}");
    }
}

/// Checks session `i`: its record, each turn exactly once, its own fact exactly once with
/// this session among its occurrences exactly once.
fn check_session(db: &Memory, facts: &[FactRecord], i: u64, what: &str) {
    let t = tenant();
    let id = format!("s{i}");
    let rec = db
        .db()
        .get(
            &t,
            Table::Sessions.into(),
            &record::prefixed(b's', id.as_bytes()),
        )
        .unwrap()
        .unwrap_or_else(|| panic!("{what}: acknowledged session {i} lost"));
    let rec: SessionRecord = record::decode(&rec, "session").unwrap();
    assert_eq!(rec.turns, 4, "{what}: session {i}");
    let prefix = record::turn_key(&id, 0);
    let turns: Vec<TurnRecord> = db
        .db()
        .scan_prefix(&t, Table::Turns.into(), &prefix[..8], None)
        .unwrap()
        .map(|kv| record::decode(&kv.unwrap().1, "turn").unwrap())
        .collect();
    let want = texts(i);
    let got: Vec<&str> = turns.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(
        got,
        want.iter().map(String::as_str).collect::<Vec<_>>(),
        "{what}"
    );
    let own = format!("pixel{i} ");
    let mine: Vec<&FactRecord> = facts
        .iter()
        .filter(|f| format!("{} ", f.norm).contains(&own))
        .filter(|f| f.occurrences.iter().any(|o| o.session == id))
        .collect();
    assert!(!mine.is_empty(), "{what}: session {i}'s own fact lost");
    for f in mine {
        let n = f.occurrences.iter().filter(|o| o.session == id).count();
        assert_eq!(
            n, 1,
            "{what}: session {i} counted {n} times in {:?}",
            f.text
        );
    }
}

fn all_facts(db: &Memory) -> Vec<FactRecord> {
    let t = tenant();
    let rows = db
        .db()
        .scan_prefix(&t, Table::Facts.into(), &[], None)
        .unwrap();
    let facts: Vec<FactRecord> = rows
        .map(|kv| record::decode(&kv.unwrap().1, "fact").unwrap())
        .collect();
    let mut norms: Vec<&str> = facts.iter().map(|f| f.norm.as_str()).collect();
    norms.sort_unstable();
    let before = norms.len();
    norms.dedup();
    assert_eq!(before, norms.len(), "a fact is stored twice");
    facts
}

/// Runs the child until it acknowledged a random number of sessions (1..=6) plus a random
/// delay, then kills it; returns the highest session number it acknowledged.
fn run_child(dir: &std::path::Path, from: u64, rng: &mut impl Rng) -> Option<u64> {
    let mut proc = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sigkill_during_ingest_flush_compaction_and_summaries_loses_nothing",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .env(FROM_ENV, from.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kept open until the kill, so the child never sees a broken pipe.
    let mut lines = BufReader::new(proc.stdout.take().unwrap()).lines();
    let want = rng.gen_range(1..=6);
    let mut acked = None;
    let mut seen = 0;
    for line in lines.by_ref() {
        if let Some(n) = line.unwrap().strip_prefix("ack ") {
            acked = Some(n.parse::<u64>().unwrap());
            seen += 1;
            if seen >= want {
                break;
            }
        }
    }
    std::thread::sleep(Duration::from_millis(rng.gen_range(0..40)));
    proc.kill().unwrap();
    proc.wait().unwrap();
    drop(lines);
    acked
}

#[test]
fn sigkill_during_ingest_flush_compaction_and_summaries_loses_nothing() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
        return;
    }
    let iters: usize =
        std::env::var("MEMFOREST_KILL_LOOP_ITERS").map_or(10, |v| v.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::thread_rng();
    let mut acked: Option<u64> = None;
    let (mut segment_files, mut deeper_files, mut trees) = (0, 0, 0);
    let start = Instant::now();
    for round in 0..iters {
        let from = acked.map_or(0, |a| a + 1);
        if let Some(a) = run_child(dir.path(), from, &mut rng) {
            acked = Some(acked.map_or(a, |b| b.max(a)));
        }
        let what = format!("round {round} (acknowledged up to {acked:?})");
        let db = Memory::open_with(dir.path(), options()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let report = db
            .verify()
            .unwrap_or_else(|e| panic!("{what}: verify: {e}"));
        segment_files = segment_files.max(report.store.segment_files);
        deeper_files = deeper_files.max(report.store.level_files.iter().skip(1).sum::<u64>());
        let facts = all_facts(&db);
        if let Some(a) = acked {
            for i in 0..=a {
                check_session(&db, &facts, i, &what);
            }
        }
        db.flush_summaries()
            .unwrap_or_else(|e| panic!("{what}: flush_summaries: {e}"));
        let report = db
            .verify()
            .unwrap_or_else(|e| panic!("{what}: verify after summaries: {e}"));
        trees = trees.max(report.trees);
        db.close().unwrap();
    }
    eprintln!(
        "kill loop: {iters} kills, sessions acknowledged up to {acked:?}, up to \
         {segment_files} segment files ({deeper_files} below level 0), {trees} trees, {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(acked.is_some(), "the child never acknowledged a session");
    assert!(
        segment_files > 0,
        "no memtable flush happened: the test needs them"
    );
    assert!(trees > 0, "no tree was built");
}
