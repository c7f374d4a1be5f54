//! Memory query latency: `Db::query` (lexical, k = 10, beam 10) against a flat in-memory
//! BM25 over every fact of the tenant ([`Bm25Index`], the same scorer without trees or
//! storage), both in the same run, at several facts-per-tenant sizes.
//!
//! The workload (`workloads/query.rs`): synthetic facts over a Zipf(1) vocabulary of 20 000 letter-only words, one fact per
//! user turn, 100 turns per session, each fact naming one of 300 people (entity trees) and
//! two topic words (scenes); queries take 4 words of rank >= 100. Summaries are all
//! computed before timing. A loaded store is kept in `$CARGO_TARGET_DIR/query-store-N`
//! (default `target/`) and reused by later runs (delete it to reload).
//!
//! Run: `cargo bench -p memforest-benches --bench query`. Sizes: `MEMFOREST_QUERY_SIZES`
//! (comma-separated, default `10000,100000`); e.g. `MEMFOREST_QUERY_SIZES=10000,100000,1000000`.
//! Besides criterion's means it prints p50/p99 over 2000 queries per size and engine (the
//! two interleaved, after criterion's warm-up), and the ratios of the largest size's
//! p50/p99 to the smallest's.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup: a failure aborts the run"
)]

use std::time::{Duration, Instant};

use criterion::{criterion_main, Criterion};
use memforest::recall::Query;

const TIMED_QUERIES: usize = 2_000;

#[path = "workloads/query.rs"]
mod workload;

use workload::Store;

fn forest(s: &Store, q: &str) -> usize {
    s.db.query(&s.tenant, &Query::new(q)).unwrap().facts.len()
}

fn flat(s: &Store, q: &str) -> usize {
    s.flat.search(q, 10).len()
}

/// p50 and p99 of each engine over the store's queries, the two interleaved so machine
/// noise hits both alike.
fn percentiles(s: &Store) -> [(Duration, Duration); 2] {
    let mut lat = [Vec::new(), Vec::new()];
    for q in &s.workload.queries {
        for (i, run) in [forest as fn(&Store, &str) -> usize, flat]
            .into_iter()
            .enumerate()
        {
            let t = Instant::now();
            std::hint::black_box(run(s, q));
            lat[i].push(t.elapsed());
        }
    }
    lat.map(|mut l| {
        l.sort();
        (l[l.len() / 2], l[l.len() * 99 / 100])
    })
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
        let s = workload::store(n, TIMED_QUERIES);
        for (name, run) in [
            ("forest", forest as fn(&Store, &str) -> usize),
            ("flat", flat),
        ] {
            let mut i = 0;
            g.bench_function(format!("{name}/{n}"), |b| {
                b.iter(|| {
                    i = (i + 1) % s.workload.queries.len();
                    run(&s, &s.workload.queries[i])
                });
            });
        }
        let [f, b] = percentiles(&s);
        table.push((n, "forest", f.0, f.1));
        table.push((n, "flat", b.0, b.1));
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
