//! Memory write path: `Db::ingest_session` of a fixed synthetic corpus
//! (`memforest_benches::synth`, 2,000 facts in 20 sessions of 100, one fact per
//! turn) followed by `flush_summaries()`, with the header-only `none` summarizer and with
//! the default extractive one, against a same-run peer: the engine's raw `write` of the same
//! turn texts as one batch per session (the storage floor: no cells, facts, trees or
//! postings). Each iteration starts from an empty store (opened outside the timing).
//!
//! Run: `cargo bench -p memforest-benches --bench ingest` (about 2 minutes). The summary
//! lines printed at the end give each variant's mean time per fact and its ratio to the
//! peer.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup: a failure aborts the run"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_main, Criterion};
use memforest::memory::session::Session;
use memforest::memory::summarize::{ExtractiveSummarizer, HeaderOnlySummarizer, Summarizer};
use memforest::{Memory, Options};
use memforest_benches::synth::{SynthConfig, SynthCorpus, SynthExtractor};
use memforest_engine::{Durability, TenantId, WriteBatch};

const SESSIONS: usize = 20;

fn corpus() -> Vec<Session> {
    let mut c = SynthCorpus::new(SynthConfig::default(), 1);
    (0..SESSIONS).map(|_| c.session(usize::MAX)).collect()
}

fn facts(sessions: &[Session]) -> usize {
    sessions.iter().map(|s| s.turns.len()).sum()
}

fn open(summarizer: Arc<dyn Summarizer>) -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.memory.extractor = Arc::new(SynthExtractor);
    o.memory.summarizer = summarizer;
    let db = Memory::open_with(dir.path(), o).unwrap();
    (dir, db)
}

/// Times `work` on a fresh store per iteration.
fn timed(iters: u64, summarizer: &Arc<dyn Summarizer>, work: impl Fn(&Memory)) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let (_dir, db) = open(Arc::clone(summarizer));
        let start = Instant::now();
        work(&db);
        total += start.elapsed();
    }
    total
}

fn ingest_all(db: &Memory, sessions: &[Session]) {
    let tenant = TenantId::new("bench").unwrap();
    for s in sessions {
        db.ingest_session(&tenant, s).unwrap();
    }
    db.flush_summaries().unwrap();
}

fn raw_put(db: &Memory, sessions: &[Session]) {
    let tenant = TenantId::new("bench").unwrap();
    let mut n = 0u64;
    for s in sessions {
        let mut b = WriteBatch::new();
        for t in &s.turns {
            b.put(
                &tenant,
                memforest_engine::Table::new(3),
                &n.to_be_bytes(),
                t.text.as_bytes(),
            );
            n += 1;
        }
        db.db().write(&b, Durability::Buffered).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let sessions = corpus();
    let n = facts(&sessions);
    let none: Arc<dyn Summarizer> = Arc::new(HeaderOnlySummarizer);
    let extractive: Arc<dyn Summarizer> = Arc::new(ExtractiveSummarizer::default());
    let mut g = c.benchmark_group("ingest_2000_facts");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.warm_up_time(Duration::from_secs(1));
    let mut means = Vec::new();
    let variants: [(&str, &Arc<dyn Summarizer>, bool); 3] = [
        ("raw_put_peer", &none, true),
        ("ingest_none", &none, false),
        ("ingest_extractive", &extractive, false),
    ];
    for (name, summarizer, raw) in variants {
        let mut spent = (Duration::ZERO, 0u64);
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let d = timed(iters, summarizer, |db| {
                    if raw {
                        raw_put(db, &sessions);
                    } else {
                        ingest_all(db, &sessions);
                    }
                });
                spent.0 += d;
                spent.1 += iters;
                d
            });
        });
        means.push((name, spent.0.as_secs_f64() / spent.1.max(1) as f64));
    }
    g.finish();
    let peer = means.first().map_or(1.0, |m| m.1);
    for (name, mean) in &means {
        eprintln!(
            "ingest bench: {name}: {:.1} us/fact ({:.0} facts/s), {:.1}x the raw-put peer",
            mean * 1e6 / n as f64,
            n as f64 / mean,
            mean / peer
        );
    }
}

/// Private, so the generated `pub fn` needs no doc comment.
mod group {
    criterion::criterion_group!(benches, super::bench);
}
criterion_main!(group::benches);
