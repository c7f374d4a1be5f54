//! Crash test for the memory layer: a child process (this test binary re-executed) ingests
//! numbered sessions with a slow extractor and a slow summarizer and prints each acknowledged
//! session; the parent SIGKILLs it mid-extraction / mid-refresh, reopens, lets the recovered
//! work finish, and compares the facts with a clean ingest of the same sessions: no fact
//! lost, none duplicated, every summary current.
//!
//! `MEMFOREST_MEMORY_CRASH_ITERS` sets the number of kill/reopen rounds (default 3).
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

#[path = "memory_common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use memforest::memory::extract::{Extraction, ExtractionInput, Extractor, HeuristicExtractor};
use memforest::memory::model::ModelError;
use memforest::memory::session::Session;
use memforest::memory::summarize::{
    ExtractiveSummarizer, Summarizer, SummaryOutput, SummaryRequest,
};
use memforest::Memory;
use rand::Rng;

const CHILD_ENV: &str = "MEMFOREST_MEMORY_CRASH_DIR";
const SESSIONS: i64 = 40;

#[derive(Debug)]
struct Slow;

impl Extractor for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        std::thread::sleep(Duration::from_millis(3));
        HeuristicExtractor.extract(input)
    }
}

impl Summarizer for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn summarize(&self, r: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        std::thread::sleep(Duration::from_millis(2));
        ExtractiveSummarizer::default().summarize(r)
    }
}

fn numbered(i: i64) -> Session {
    let a = format!(
        "I met Jordan at the Lakeside Cafe on day {i} and we talked about {}.",
        i % 7
    );
    let b = format!("Jordan mentioned the marathon is {} km long.", 10 + i % 5);
    session(
        &format!("s{i}"),
        i,
        &[&a, &b, &a, "Sounds like a good plan for next week."],
    )
}

fn child(dir: &str) {
    let mut opts = options(Some(Arc::new(Slow)));
    opts.memory.extractor = Arc::new(Slow);
    let db = Memory::open_with(dir, opts).unwrap();
    for i in 0..SESSIONS {
        db.ingest_session(&tenant(), &numbered(i)).unwrap();
        println!("{i}");
    }
    db.flush_summaries().unwrap();
    println!("done");
    std::thread::sleep(Duration::from_secs(10));
}

/// Fact ids with their occurrence counts, sorted.
fn fact_counts(db: &Memory) -> Vec<(u64, usize)> {
    facts(db)
        .into_iter()
        .map(|(id, f)| (id, f.occurrences.len()))
        .collect()
}

fn stored_sessions(db: &Memory) -> i64 {
    (0..SESSIONS)
        .take_while(|i| {
            let key = memforest::memory::record::prefixed(b's', format!("s{i}").as_bytes());
            db.db()
                .get(&tenant(), memforest::schema::Table::Sessions.into(), &key)
                .unwrap()
                .is_some()
        })
        .count() as i64
}

#[test]
fn extraction_and_refresh_survive_sigkill() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
        return;
    }
    let iters: usize =
        std::env::var("MEMFOREST_MEMORY_CRASH_ITERS").map_or(3, |v| v.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = rand::thread_rng();
    let mut acked = -1i64;
    for _ in 0..iters {
        let mut proc = Command::new(&exe)
            .args([
                "--exact",
                "extraction_and_refresh_survive_sigkill",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // Kept open until the kill, so the child never sees a broken pipe and exits cleanly.
        let mut lines = BufReader::new(proc.stdout.take().unwrap()).lines();
        let stop_after = rng.gen_range(2..12);
        let mut seen = 0;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Ok(n) = line.parse::<i64>() {
                acked = acked.max(n);
                seen += 1;
            }
            if seen >= stop_after || line == "done" {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..20)));
        proc.kill().unwrap();
        proc.wait().unwrap();
        drop(lines);
        let db = Memory::open_with(dir.path(), options(None)).unwrap();
        db.flush_summaries().unwrap();
        let stored = stored_sessions(&db);
        assert!(
            stored > acked,
            "acknowledged session {acked} lost (stored {stored})"
        );
        let reference_dir = tempfile::tempdir().unwrap();
        let reference = Memory::open_with(reference_dir.path(), options(None)).unwrap();
        for i in 0..stored {
            reference.ingest_session(&tenant(), &numbered(i)).unwrap();
        }
        assert_eq!(
            fact_counts(&db),
            fact_counts(&reference),
            "facts differ from a clean ingest"
        );
        assert!(assert_summaries_current(&db) > 0);
        db.close().unwrap();
    }
}
