//! WAL append throughput against the machine's own limits, measured in the same run.
//!
//! Criterion groups (MB/s of batch payload; batches/s = MB/s / batch bytes):
//! - `wal_append/{buffered,sync_data}/{threads}t/{entries}e`: 1 and 4 writer threads,
//!   batches of 1, 16 and 256 entries with 100-byte values.
//! - `disk/write_then_fdatasync/{entries}e`: the peer for `Buffered`: plain sequential
//!   `write`s of the same encoded bytes, one per batch, and one `fdatasync` at the end.
//! - `disk/small_write_fdatasync`: the peer for `SyncData`: a loop of one small write and one
//!   `fdatasync`.
//!
//! After criterion, a summary table prints the ratios the issue asks for (fixed work, same
//! run): Buffered vs raw write, SyncData batches/s vs the fsync loop's rate, and
//! batches per fsync with 1, 2, 4 and 8 writers.
//!
//! Run: `cargo bench -p memforest-benches --bench wal_append`.
#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    reason = "benchmark setup: a failure aborts the run; sizes and rates are small"
)]

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use memforest_wal::{batch, Compression, Durability, Wal, WalOptions, WriteBatch};

const VALUE_LEN: usize = 100;
const BATCH_ENTRIES: [usize; 3] = [1, 16, 256];

fn make_batch(entries: usize) -> WriteBatch {
    let mut b = WriteBatch::new();
    for i in 0..entries {
        b.push(1, format!("key-{i:08}"), vec![(i % 251) as u8; VALUE_LEN]);
    }
    b
}

/// Encoded size of a batch: what one append writes, before framing.
fn encoded_len(b: &WriteBatch) -> usize {
    batch::encode(0, b, Compression::default()).map_or(0, |v| v.len())
}

fn options() -> WalOptions {
    WalOptions::default()
}

/// Appends `total` batches from `threads` threads into a fresh log; returns the elapsed
/// time and the log's stats.
fn run_appends(
    dir: &Path,
    b: &WriteBatch,
    threads: usize,
    total: u64,
    durability: Durability,
) -> (Duration, memforest_wal::WalStats) {
    let (wal, _) = Wal::open(dir, options()).unwrap();
    let wal = Arc::new(wal);
    let per = total.div_ceil(threads as u64);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            let wal = &wal;
            s.spawn(move || {
                for _ in 0..per {
                    wal.append(b, durability).unwrap();
                }
            });
        }
    });
    let elapsed = start.elapsed();
    (elapsed, wal.stats())
}

/// Writes `chunks` chunks of `chunk` bytes with one `write` each, then one `fdatasync`.
fn raw_write_then_sync(dir: &Path, chunk: usize, chunks: u64) -> Duration {
    let buf = vec![0x5au8; chunk];
    let mut f = File::create(dir.join("raw")).unwrap();
    let start = Instant::now();
    for _ in 0..chunks {
        f.write_all(&buf).unwrap();
    }
    f.sync_data().unwrap();
    start.elapsed()
}

/// `n` rounds of a 128-byte write followed by `fdatasync`.
fn raw_small_write_fsync(dir: &Path, n: u64) -> Duration {
    let buf = [0xa5u8; 128];
    let mut f = File::create(dir.join("fsync")).unwrap();
    let start = Instant::now();
    for _ in 0..n {
        f.write_all(&buf).unwrap();
        f.sync_data().unwrap();
    }
    start.elapsed()
}

fn wal_append(c: &mut Criterion) {
    let mut g = c.benchmark_group("wal_append");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for (name, durability) in [
        ("buffered", Durability::Buffered),
        ("sync_data", Durability::SyncData),
    ] {
        for entries in BATCH_ENTRIES {
            let b = make_batch(entries);
            g.throughput(Throughput::Bytes(encoded_len(&b) as u64));
            for threads in [1usize, 4] {
                let id = BenchmarkId::new(format!("{name}/{threads}t"), format!("{entries}e"));
                g.bench_function(id, |bench| {
                    bench.iter_custom(|iters| {
                        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
                        run_appends(dir.path(), &b, threads, iters, durability).0
                    });
                });
            }
        }
    }
    g.finish();

    let mut g = c.benchmark_group("disk");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for entries in BATCH_ENTRIES {
        let chunk = encoded_len(&make_batch(entries));
        g.throughput(Throughput::Bytes(chunk as u64));
        g.bench_function(
            BenchmarkId::new("write_then_fdatasync", format!("{entries}e")),
            |bench| {
                bench.iter_custom(|iters| {
                    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
                    raw_write_then_sync(dir.path(), chunk, iters)
                });
            },
        );
    }
    g.throughput(Throughput::Elements(1));
    g.bench_function("small_write_fdatasync", |bench| {
        bench.iter_custom(|iters| {
            let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
            raw_small_write_fsync(dir.path(), iters)
        });
    });
    g.finish();
}

/// Private, so the generated `pub fn` needs no doc comment.
mod group {
    criterion::criterion_group!(benches, super::wal_append);
}

fn rate(n: f64, d: Duration) -> f64 {
    n / d.as_secs_f64()
}

/// Fixed-work measurements printed as ratios against same-run peers.
fn summary() {
    let tmp = || tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    const TOTAL_BYTES: u64 = 64 << 20;
    println!("\n== wal_append summary (same run; ratios are what the goals are about)");
    println!("Buffered, 1 writer, {TOTAL_BYTES} bytes of batches, one final sync each side:");
    println!("| entries/batch | WAL MB/s | WAL batches/s | raw write (same chunks) MB/s | ratio | raw write (1 MiB chunks) MB/s | ratio |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let big = {
        let dir = tmp();
        rate(
            TOTAL_BYTES as f64,
            raw_write_then_sync(dir.path(), 1 << 20, TOTAL_BYTES >> 20),
        ) / 1e6
    };
    for entries in BATCH_ENTRIES {
        let b = make_batch(entries);
        let len = encoded_len(&b);
        let n = TOTAL_BYTES / len as u64;
        let dir = tmp();
        let (wal, _) = Wal::open(dir.path(), options()).unwrap();
        let start = Instant::now();
        for _ in 0..n {
            wal.append(&b, Durability::Buffered).unwrap();
        }
        wal.sync().unwrap();
        let t = start.elapsed();
        drop(wal);
        let wal_mbs = rate((n * len as u64) as f64, t) / 1e6;
        let dir = tmp();
        let raw_mbs = rate(
            (n * len as u64) as f64,
            raw_write_then_sync(dir.path(), len, n),
        ) / 1e6;
        println!(
            "| {entries} | {wal_mbs:.1} | {:.0} | {raw_mbs:.1} | {:.2} | {big:.1} | {:.2} |",
            rate(n as f64, t),
            wal_mbs / raw_mbs,
            wal_mbs / big
        );
    }

    let fsyncs = 1000;
    let dir = tmp();
    let fsync_rate = rate(fsyncs as f64, raw_small_write_fsync(dir.path(), fsyncs));
    println!(
        "\nSyncData, 1-entry batches; peer: 128-byte write + fdatasync loop = {fsync_rate:.0}/s"
    );
    println!("| writers | batches/s | x fsync-loop rate | batches per fsync |");
    println!("| --- | --- | --- | --- |");
    let b = make_batch(1);
    for threads in [1usize, 2, 4, 8] {
        let total = 800 * threads as u64;
        let dir = tmp();
        let (t, stats) = run_appends(dir.path(), &b, threads, total, Durability::SyncData);
        let bps = rate(stats.batches as f64, t);
        println!(
            "| {threads} | {bps:.0} | {:.2} | {:.2} |",
            bps / fsync_rate,
            stats.batches_per_sync()
        );
    }
}

fn main() {
    group::benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
    // Only under `cargo bench` (criterion gets `--bench`), not `cargo test --benches`.
    if std::env::args().any(|a| a == "--bench") {
        summary();
    }
}
