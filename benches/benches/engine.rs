//! memforest-engine against fjall (the closest Rust LSM), same process, same durability
//! class (buffered: each write reaches the OS page cache, no fsync), db_bench workloads
//! with 16-byte keys and 100-byte values:
//!
//! - `engine_fill/{fillseq,fillrandom}/{memforest,fjall}`: puts into a fresh database.
//! - `engine_read/readrandom/{memforest,fjall}`: gets of random existing keys of a
//!   100 k-entry database (flushed, so reads go to segment files).
//!
//! Run: `cargo bench -p memforest-benches --bench engine`. The full db_bench table (1 M
//! records, p50/p99/p99.9, write and space amplification, fjall, redb and SQLite) is
//! `memforest bench storage` (`docs/benchmarks.md`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup: a failure aborts the run"
)]

#[path = "workloads/db_bench.rs"]
mod workload;

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_main, Criterion, Throughput};
use workload::{key, Fjall, Memforest, Store, Workload};

/// Puts per fill measurement.
const FILL_OPS: u64 = 20_000;
/// Entries in the read database.
const READ_ENTRIES: u64 = 100_000;

type Open = fn(&Path) -> Box<dyn Store>;

fn engines() -> [(&'static str, Open); 2] {
    [
        ("memforest", |p| Box::new(Memforest::open(p))),
        ("fjall", |p| Box::new(Fjall::open(p))),
    ]
}

fn fill(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine_fill");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(FILL_OPS));
    for w in [Workload::FillSeq, Workload::FillRandom] {
        for (name, open) in engines() {
            g.bench_function(format!("{}/{name}", w.name()), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for i in 0..iters {
                        let dir = tempfile::tempdir().unwrap();
                        let store = open(dir.path());
                        total += workload::fill(&*store, w, FILL_OPS, i);
                    }
                    total
                });
            });
        }
    }
    g.finish();
}

fn read(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine_read");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(1));
    for (name, open) in engines() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        workload::fill(&*store, Workload::FillRandom, READ_ENTRIES, 7);
        store.flush();
        g.bench_function(format!("readrandom/{name}"), |b| {
            let mut i = 0u64;
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    i = i
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    std::hint::black_box(store.get(&key(i % READ_ENTRIES)));
                }
                start.elapsed()
            });
        });
    }
    g.finish();
}

/// Private, so the generated `pub fn` needs no doc comment.
mod group {
    criterion::criterion_group!(benches, super::fill, super::read);
}
criterion_main!(group::benches);
