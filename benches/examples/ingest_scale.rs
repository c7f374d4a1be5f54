//! Write-path throughput at scale (issue 6): ingests `N` synthetic facts
//! ([`memforest_benches::synth`]) over `T` tenants through `Memory::ingest_session`,
//! printing facts/s per window of 10^4 facts (so a cost that grows with N shows as a
//! falling rate) with the peak RSS (`VmHWM`) and its anonymous / file-backed parts (the
//! segment files are memory-mapped), then on-disk bytes per fact and the time of the
//! final `flush_summaries()`.
//!
//! `cargo run --release -p memforest-benches --example ingest_scale -- [facts] [tenants]
//! [none|extractive]` (defaults: 100000 1 none). Sessions go to the tenants round-robin,
//! 100 facts per session.
//!
//! Recorded 2026-11-29 23:49 UTC (final code, load average 6-12): 10^6 facts, 1 tenant,
//! 225 s (4,440 facts/s); the first 10^4 facts at 9,565 facts/s (empty store), mean window
//! rate per 10^5 facts 6,090, 5,632, 4,113, 4,460, 4,618, 4,523, 4,746, 4,905, 3,756, 3,950
//! (last decade 1.5x the per-fact cost of the first 10^5, 2.4x that of the first 10^4);
//! peak RSS 994 MiB, of which anonymous 221 MiB; 5,501 user bytes written per fact, write
//! amplification 3.37, 1,925 bytes on disk per fact. 10^6 facts over 100 tenants: 197 s
//! (5,077 facts/s); first 10^4 at 15,354 facts/s, windows per 10^5 11,660, 6,596, 5,732,
//! 5,626, 5,502, 6,046, 4,924, 4,801, 4,030, 3,825; peak RSS 1,223 MiB, anonymous 268 MiB;
//! 4,515 user bytes per fact, write amplification 3.72, 1,717 bytes on disk per fact.
//!
//! Earlier, summarizer none, on the 2-core machine shared by five engineers'
//! builds (load average 14 rising to 43 during the runs, so rates are CPU-starved and the
//! late windows slower for that reason too):
//! - 10^6 facts, 1 tenant: 604 s (1,657 facts/s); mean window rate per 10^5 facts 2,955,
//!   2,768, 1,843, 2,728, 1,934, 2,336, 1,550, 1,641, 1,360, 1,362; peak RSS 1,150 MiB;
//!   5,197 user bytes written per fact, write amplification 3.44, 1,698 bytes on disk per
//!   fact.
//! - 10^6 facts, 100 tenants: 547 s (1,828 facts/s); windows 8,196, 3,344, 1,627, 2,732,
//!   2,510, 1,876, 1,658, 1,409, 1,701, 1,744; peak RSS 1,200 MiB of which anonymous
//!   277 MiB (flat from 5 * 10^5 on; the rest is mapped segment-file pages); 4,514 user
//!   bytes per fact, write amplification 3.90, 1,708 bytes on disk per fact.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "bench binary: a failure aborts the run"
)]

use std::sync::Arc;
use std::time::Instant;

use memforest::memory::summarize::{ExtractiveSummarizer, HeaderOnlySummarizer, Summarizer};
use memforest::{Memory, Options};
use memforest_benches::synth::{SynthConfig, SynthCorpus, SynthExtractor};
use memforest_engine::TenantId;

const WINDOW: usize = 10_000;

/// A `/proc/self/status` field in MiB (`VmHWM`: peak RSS; `RssAnon`: heap and stacks;
/// `RssFile`: resident file pages, i.e. the memory-mapped segment files), 0 when unknown.
fn status_mib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| {
                v.trim_start_matches(':')
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
        })
        .map_or(0, |kb| kb >> 10)
}

fn dir_bytes(path: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let facts: usize = args.first().map_or(100_000, |a| a.parse().unwrap());
    let tenants: usize = args.get(1).map_or(1, |a| a.parse().unwrap());
    let summarizer: Arc<dyn Summarizer> = match args.get(2).map_or("none", String::as_str) {
        "extractive" => Arc::new(ExtractiveSummarizer::default()),
        _ => Arc::new(HeaderOnlySummarizer),
    };
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.memory.extractor = Arc::new(SynthExtractor);
    options.memory.summarizer = summarizer;
    let db = Memory::open_with(dir.path(), options).unwrap();
    let ids: Vec<TenantId> = (0..tenants)
        .map(|t| TenantId::new(format!("t{t}")).unwrap())
        .collect();
    let mut corpora: Vec<SynthCorpus> = (0..tenants)
        .map(|t| SynthCorpus::new(SynthConfig::default(), t as u64))
        .collect();
    println!("ingest_scale: {facts} facts, {tenants} tenant(s)");
    let start = Instant::now();
    let mut window = Instant::now();
    let (mut made, mut next_report, mut added) = (0usize, WINDOW, 0u64);
    let mut t = 0;
    while made < facts {
        let (tenant, corpus) = (&ids[t], &mut corpora[t]);
        t = (t + 1) % tenants;
        let session = corpus.session(facts - made);
        made += session.turns.len();
        added += db.ingest_session(tenant, &session).unwrap().facts_added;
        if made >= next_report {
            let secs = window.elapsed().as_secs_f64();
            println!(
                "facts {made:>9}  window {:>8.0} facts/s  total {:>8.1} s  peak rss {:>6} MiB  \
                 anon {:>6} MiB  file {:>6} MiB",
                WINDOW as f64 / secs,
                start.elapsed().as_secs_f64(),
                status_mib("VmHWM"),
                status_mib("RssAnon"),
                status_mib("RssFile"),
            );
            window = Instant::now();
            next_report += WINDOW;
        }
    }
    let ingest = start.elapsed().as_secs_f64();
    let flush_start = Instant::now();
    db.flush_summaries().unwrap();
    let flush = flush_start.elapsed().as_secs_f64();
    db.db().flush().unwrap();
    let bytes = dir_bytes(dir.path());
    let stats = db.db().stats();
    println!(
        "engine: {:.0} user bytes written per fact, write amplification {:.2}, {} flushes, \
         {} compactions",
        stats.user_bytes as f64 / added.max(1) as f64,
        stats.write_amplification,
        stats.flush_count,
        stats.compaction_count
    );
    println!(
        "done: {added} facts added in {ingest:.1} s ({:.0} facts/s); flush_summaries {flush:.1} s; \
         peak RSS {} MiB (now anon {} MiB, file {} MiB); {:.0} bytes on disk per fact",
        added as f64 / ingest,
        status_mib("VmHWM"),
        status_mib("RssAnon"),
        status_mib("RssFile"),
        bytes as f64 / added.max(1) as f64
    );
    db.close().unwrap();
}
