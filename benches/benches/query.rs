//! Memory query latency: `Db::query` (lexical, k = 10, beam 10) against a flat in-memory
//! BM25 over every fact of the tenant ([`Bm25Index`], the same scorer without trees or
//! storage), both in the same run, at several facts-per-tenant sizes.
//!
//! Facts are synthetic sentences over a Zipf(1) vocabulary of 20 000 letter-only words,
//! one fact per user turn, 100 turns per session, each fact naming one of 300 people
//! (entity trees) and two topic words (scenes). Queries take 4 words of rank >= 100 (the
//! most frequent ranks behave like stop words). Summaries are all computed before timing.
//!
//! Run: `cargo bench -p memforest-benches --bench query`. Sizes: `MEMFOREST_QUERY_SIZES`
//! (comma-separated, default `10000,100000`); e.g. `MEMFOREST_QUERY_SIZES=10000,100000,1000000`.
//! Besides criterion's means it prints p50/p99 over 2000 queries per size and engine, and
//! the ratio of the largest size's p99 to the smallest's.
//!
//! Recorded 2026-11-29 (2-core shared machine, `MEMFOREST_QUERY_SIZES=10000,100000`):
//! forest p50 1018 us / p99 21160 us at 10^4, 1630 us / 6091 us at 10^5 (p50 x1.6 for
//! x10 facts); flat in-memory BM25 p50 15 us / p99 55 us at 10^4, 162 us / 312 us at 10^5
//! (p50 x10.7). Building 10^5 facts with summaries took 375 s, so 10^6 (about an hour)
//! was not run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup: a failure aborts the run"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_main, Criterion};
use memforest_engine::memory::extract::{
    ExtractedItem, Extraction, ExtractionInput, Extractor, Origin,
};
use memforest_engine::memory::model::{ModelError, Usage};
use memforest_engine::memory::session::{Role, Session, Turn};
use memforest_engine::memory::MemoryOptions;
use memforest_engine::recall::{Bm25Index, Query};
use memforest_engine::{Db, Options, TenantId};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const VOCAB: usize = 20_000;
const PEOPLE: usize = 300;
const TURNS_PER_SESSION: usize = 100;
const TIMED_QUERIES: usize = 2_000;
const DAY: i64 = 86_400_000_000;
const T0: i64 = 1_677_628_800_000_000;

/// One fact per turn; `text | person | topic topic` in the turn text.
#[derive(Debug)]
struct BenchExtractor;

impl Extractor for BenchExtractor {
    fn name(&self) -> &str {
        "bench"
    }

    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        let items = input
            .turns
            .iter()
            .map(|t| {
                let mut parts = t.text.split('|');
                let text = parts.next().unwrap_or_default().trim().to_owned();
                let person = parts.next().unwrap_or_default().trim().to_owned();
                let topics = parts
                    .next()
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
                ExtractedItem {
                    fact_text: text,
                    origin: Some(Origin::User),
                    entities: vec![person],
                    topics,
                    time_start: Some(t.time),
                    time_end: Some(t.time),
                    source_turns: vec![t.turn_id.clone()],
                    ..ExtractedItem::default()
                }
            })
            .collect();
        Ok(Extraction {
            items,
            usage: Usage::default(),
        })
    }
}

/// Letter-only pseudo-words (stable under stemming, never stop words).
fn word(i: usize) -> String {
    const C: &[u8] = b"bdfgklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut w = String::from("q");
    let mut n = i + 1;
    while n > 0 {
        w.push(char::from(C[n % C.len()]));
        w.push(char::from(V[(n / C.len()) % V.len()]));
        n /= C.len() * V.len();
    }
    w.push('x');
    w
}

struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Self {
        let mut acc = 0.0;
        let cdf = (1..=n)
            .map(|r| {
                acc += 1.0 / r as f64;
                acc
            })
            .collect::<Vec<_>>();
        let total = acc;
        Self {
            cdf: cdf.into_iter().map(|c| c / total).collect(),
        }
    }

    fn sample(&self, rng: &mut StdRng) -> usize {
        let x: f64 = rng.gen();
        self.cdf.partition_point(|&c| c < x).min(self.cdf.len() - 1)
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    db: Db,
    tenant: TenantId,
    flat: Bm25Index,
    queries: Vec<String>,
}

fn build(n: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let memory = MemoryOptions {
        extractor: Arc::new(BenchExtractor),
        ..MemoryOptions::default()
    };
    let db = Db::open(
        dir.path(),
        Options {
            memory,
            ..Options::default()
        },
    )
    .unwrap();
    let tenant = TenantId::new("bench").unwrap();
    let zipf = Zipf::new(VOCAB);
    let mut rng = StdRng::seed_from_u64(n as u64);
    let mut docs = Vec::with_capacity(n);
    let started = Instant::now();
    let mut made = 0;
    let mut s = 0i64;
    while made < n {
        let count = TURNS_PER_SESSION.min(n - made);
        let turns = (0..count)
            .map(|i| {
                let len = rng.gen_range(8..14);
                let words: Vec<String> = (0..len).map(|_| word(zipf.sample(&mut rng))).collect();
                let person = format!("Person {}", word(rng.gen_range(0..PEOPLE)));
                let topics = format!("{} {}", words[0], words[1]);
                // A unique serial keeps every fact distinct (no dedup merges).
                let text = format!("{} {}", words.join(" "), word(VOCAB + made + i));
                docs.push(text.clone());
                Turn {
                    time: Some(T0 + s * DAY + i as i64 * 60_000_000),
                    ..Turn::new(Role::User, "Ann", format!("{text} | {person} | {topics}"))
                }
            })
            .collect();
        db.ingest_session(
            &tenant,
            &Session {
                id: format!("s{s}"),
                start: T0 + s * DAY,
                turns,
            },
        )
        .unwrap();
        made += count;
        s += 1;
    }
    db.flush_summaries().unwrap();
    db.flush().unwrap();
    eprintln!(
        "query bench: {n} facts ingested and summarized in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let flat = Bm25Index::build(docs.iter().enumerate().map(|(i, d)| (i as u64, d.as_str())));
    let queries = (0..TIMED_QUERIES)
        .map(|_| {
            (0..4)
                .map(|_| word(100 + zipf.sample(&mut rng) % (VOCAB - 100)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Fixture {
        _dir: dir,
        db,
        tenant,
        flat,
        queries,
    }
}

fn forest(f: &Fixture, q: &str) -> usize {
    let r = f.db.query(&f.tenant, &Query::new(q)).unwrap();
    r.facts.len()
}

fn flat(f: &Fixture, q: &str) -> usize {
    f.flat.search(q, 10).len()
}

fn percentiles(f: &Fixture, run: fn(&Fixture, &str) -> usize) -> (Duration, Duration) {
    let mut lat: Vec<Duration> = f
        .queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            std::hint::black_box(run(f, q));
            t.elapsed()
        })
        .collect();
    lat.sort();
    (lat[lat.len() / 2], lat[lat.len() * 99 / 100])
}

fn sizes() -> Vec<usize> {
    std::env::var("MEMFOREST_QUERY_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![10_000, 100_000])
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("query");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    let mut table = Vec::new();
    for n in sizes() {
        let f = build(n);
        for (name, run) in [
            ("forest", forest as fn(&Fixture, &str) -> usize),
            ("flat", flat),
        ] {
            let mut i = 0;
            g.bench_function(format!("{name}/{n}"), |b| {
                b.iter(|| {
                    i = (i + 1) % f.queries.len();
                    run(&f, &f.queries[i])
                });
            });
            let (p50, p99) = percentiles(&f, run);
            table.push((n, name, p50, p99));
        }
    }
    g.finish();
    eprintln!("\nquery latency (lexical, k = 10, beam 10), {TIMED_QUERIES} queries per row:");
    eprintln!(
        "{:>9} {:>7} {:>10} {:>10}",
        "facts", "engine", "p50 us", "p99 us"
    );
    for (n, name, p50, p99) in &table {
        eprintln!(
            "{n:>9} {name:>7} {:>10.1} {:>10.1}",
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6
        );
    }
    for name in ["forest", "flat"] {
        let rows: Vec<_> = table.iter().filter(|r| r.1 == name).collect();
        if let (Some(a), Some(b)) = (rows.first(), rows.last()) {
            if a.0 != b.0 {
                eprintln!(
                    "{name}: p99 ratio {}/{} = {:.2} (N ratio {:.0}); p50 ratio {:.2}",
                    b.0,
                    a.0,
                    b.3.as_secs_f64() / a.3.as_secs_f64(),
                    b.0 as f64 / a.0 as f64,
                    b.2.as_secs_f64() / a.2.as_secs_f64()
                );
            }
        }
    }
}

fn benches() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
}

criterion_main!(benches);
