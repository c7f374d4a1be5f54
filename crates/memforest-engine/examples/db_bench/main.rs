//! db_bench-style comparison of memforest-engine and fjall, printed as a table.
//!
//! ```sh
//! cargo run --release -p memforest-engine --example db_bench            # 1 M entries
//! DB_BENCH_NUM=100000 cargo run --release -p memforest-engine --example db_bench
//! DB_BENCH_REPS=3 cargo run --release -p memforest-engine --example db_bench  # median of 3
//! DB_BENCH_ENGINES=memforest cargo run --release -p memforest-engine --example db_bench
//! DB_BENCH_WORKLOADS=fillseq,fillrandom cargo run --release -p memforest-engine --example db_bench
//! ```
//!
//! `DB_BENCH_WORKLOADS` runs only the listed phases (for profiling one of them); the read
//! phases read what `fillrandom` and `overwrite` wrote, so list those too for them.
//!
//! Both engines run in this process, one after the other, with buffered durability
//! (writes reach the OS page cache, no fsync per write). Write amplification is measured
//! the same way for both: bytes the process passed to `write(2)` during the fill phases
//! and the flush/compaction they caused, divided by the user key + value bytes.
//!
//! Recorded run (2026-11-29, 23:19-23:38 UTC, `DB_BENCH_REPS=3`, 1 M entries, three
//! consecutive invocations on the shared 2-core machine under heavy load from other
//! builds and benchmarks: `uptime` load average 33 / 28 / 19 at the starts). memforest /
//! fjall throughput ratio, run 1 / run 2 / run 3:
//!
//! | workload   | run 1 | run 2 | run 3 | goal   |
//! |------------|-------|-------|-------|--------|
//! | fillseq    | 1.04  | 1.09  | 1.17  | >= 1.0 |
//! | fillrandom | 1.90  | 1.79  | 1.70  | >= 1.0 |
//! | overwrite  | 2.04  | 2.11  | 1.96  |        |
//! | readrandom | 2.28  | 2.44  | 1.56  | >= 0.8 |
//! | readseq    | 1.40  | 1.62  | 1.31  |        |
//!
//! p50 latency (us), memforest vs fjall, all three runs: fillseq 1.41-1.42 vs 1.37-1.39,
//! fillrandom 2.08-2.25 vs 3.80-4.15, overwrite 2.07-2.20 vs 4.25-4.74, readrandom
//! 2.08-2.27 vs 5.72-5.95. Write amplification (the table's `w-amp`, identical in all
//! three runs): memforest 2.40 / 2.40 / 3.15 (fillseq / fillrandom / overwrite), fjall
//! 2.40 / 2.25 / 3.06. fillseq is the close one: a sequential put is half `write(2)`
//! (kernel), and memforest's p50 stays ~2-3 % behind; its mean is ahead under load because
//! the whole process (writer, flush, allocator) spends less CPU than fjall's. A fourth run
//! right after, at load 9, gave fillseq 0.98 (3.45 vs 3.38 us/op), fillrandom 1.80,
//! overwrite 1.95, readrandom 3.32, readseq 1.67: on a quieter machine fillseq is at
//! parity, not above it. Where a sequential put's time goes (perf, 400 k puts): ~50 %
//! the WAL `write(2)`, ~12 % the B-tree insert (half of it a new leaf's allocation and its
//! page faults), ~5 % building the one-op batch (key, value and entry vectors).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark driver")]

mod workload;

use std::time::Duration;

use workload::{
    process_bytes_written, run, settle, Fjall, Memforest, Report, Store, Workload, KEY_LEN,
    VALUE_LEN,
};

fn phase(
    store: &dyn Store,
    w: Workload,
    n: u64,
    seed: u64,
    rows: &mut Vec<(String, &'static str, Report, Option<f64>)>,
) {
    let selected = std::env::var("DB_BENCH_WORKLOADS").map_or(true, |list| {
        list.split(',').any(|name| name.trim() == w.name())
    });
    if !selected {
        return;
    }
    let before = process_bytes_written();
    let report = run(store, w, n, seed);
    let write_amp = if matches!(w, Workload::ReadRandom | Workload::ReadSeq) {
        None
    } else {
        settle(store, Duration::from_secs(20));
        let written = process_bytes_written().saturating_sub(before);
        Some(written as f64 / (n * (KEY_LEN + VALUE_LEN) as u64) as f64)
    };
    if let Some(d) = store.describe() {
        eprintln!("  {} {}: {d}", store.name(), w.name());
    }
    rows.push((w.name().to_owned(), store.name(), report, write_amp));
}

fn bench(
    open: &dyn Fn(&std::path::Path) -> Box<dyn Store>,
    n: u64,
    rows: &mut Vec<(String, &'static str, Report, Option<f64>)>,
) {
    let seq_dir = tempfile::tempdir().unwrap();
    {
        let store = open(seq_dir.path());
        phase(&*store, Workload::FillSeq, n, 1, rows);
    }
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    phase(&*store, Workload::FillRandom, n, 2, rows);
    phase(&*store, Workload::Overwrite, n, 3, rows);
    phase(&*store, Workload::ReadRandom, n, 4, rows);
    phase(&*store, Workload::ReadSeq, n, 5, rows);
}

type Row = (String, &'static str, Report, Option<f64>);

/// One row per (workload, engine): the repetition with the median throughput.
fn median_rows(all: Vec<Row>) -> Vec<Row> {
    let mut keys: Vec<(String, &'static str)> = Vec::new();
    for r in &all {
        if !keys.contains(&(r.0.clone(), r.1)) {
            keys.push((r.0.clone(), r.1));
        }
    }
    keys.sort_by_key(|(w, e)| (*e != "memforest", WORKLOADS.iter().position(|x| x == w)));
    keys.into_iter()
        .filter_map(|(w, e)| {
            let mut reps: Vec<&Row> = all.iter().filter(|r| r.0 == w && r.1 == e).collect();
            reps.sort_by(|a, b| a.2.ops_per_sec().total_cmp(&b.2.ops_per_sec()));
            reps.get(reps.len() / 2).map(|r| (*r).clone())
        })
        .collect()
}

const WORKLOADS: [&str; 5] = [
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readseq",
];

fn main() {
    let n: u64 = std::env::var("DB_BENCH_NUM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    println!(
        "db_bench: {n} entries, {KEY_LEN}-byte keys, {VALUE_LEN}-byte values, buffered durability"
    );
    let engines = std::env::var("DB_BENCH_ENGINES").unwrap_or_else(|_| "memforest,fjall".into());
    let reps: usize = std::env::var("DB_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    // Repetitions alternate the engines, so slow phases of a noisy machine hit both; the
    // table keeps each (workload, engine)'s median-throughput repetition.
    let mut all = Vec::new();
    for _ in 0..reps {
        if engines.contains("memforest") {
            bench(&|p| Box::new(Memforest::open(p)), n, &mut all);
        }
        if engines.contains("fjall") {
            bench(&|p| Box::new(Fjall::open(p)), n, &mut all);
        }
    }
    let rows = median_rows(all);
    println!(
        "{:<11} {:<10} {:>10} {:>12} {:>9} {:>9} {:>9} {:>9}",
        "workload", "engine", "micros/op", "ops/sec", "MB/s", "p50 us", "p99 us", "w-amp"
    );
    for (w, engine, r, wa) in &rows {
        println!(
            "{:<11} {:<10} {:>10.3} {:>12.0} {:>9.1} {:>9.2} {:>9.2} {:>9}",
            w,
            engine,
            r.micros_per_op(),
            r.ops_per_sec(),
            r.mb_per_sec(),
            r.percentile_micros(50),
            r.percentile_micros(99),
            wa.map_or("-".to_owned(), |x| format!("{x:.2}"))
        );
    }
    println!("\nmemforest / fjall throughput ratio:");
    for w in [
        "fillseq",
        "fillrandom",
        "overwrite",
        "readrandom",
        "readseq",
    ] {
        let get = |e: &str| {
            rows.iter()
                .find(|r| r.0 == w && r.1 == e)
                .map(|r| r.2.ops_per_sec())
        };
        if let (Some(m), Some(f)) = (get("memforest"), get("fjall")) {
            println!("  {w:<11} {:.2}", m / f);
        }
    }
}
