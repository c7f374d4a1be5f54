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
//! run): Buffered vs raw write, SyncData batches/s vs the fsync loop's rate (and vs the
//! same number of threads taking turns at write + fdatasync), and batches per fsync with
//! 1, 2, 4 and 8 writers. `cargo bench -p memforest-benches --bench wal_append -- summary`
//! skips criterion (no benchmark matches) and prints only the summary.
//!
//! NOTE: on small virtual machines an `fdatasync` issued while every vCPU is idle can take
//! several times longer than one issued while they are busy (idle-halt wakeup latency), and
//! several SyncData writers keep the CPUs busy. So "WAL / loop" mixes that platform effect
//! with grouping; "batches per fsync" is the group-commit factor proper.
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

/// `threads` threads taking turns (under a mutex) at one 128-byte write + `fdatasync`,
/// `n` rounds in all: the disk's serial sync rate when the syncing thread changes, as it
/// does under group commit (on some kernels and VMs this differs from a one-thread loop).
fn raw_turns_write_fsync(dir: &Path, threads: usize, n: u64) -> Duration {
    let buf = [0xa5u8; 128];
    let f = std::sync::Mutex::new(File::create(dir.join("turns")).unwrap());
    let per = n.div_ceil(threads as u64);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..per {
                    let mut f = f.lock().unwrap();
                    f.write_all(&buf).unwrap();
                    f.sync_data().unwrap();
                }
            });
        }
    });
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Rounds of each summary measurement; each ratio is taken within one round (WAL and peer
/// measured back to back) and the median over rounds is printed, to damp a noisy disk.
const ROUNDS: usize = 3;

/// Fixed-work measurements printed as ratios against same-run peers.
fn summary() {
    let tmp = || tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    const TOTAL_BYTES: u64 = 32 << 20;
    println!("\n== wal_append summary: medians of {ROUNDS} rounds, each ratio within one round");
    println!(
        "Buffered, 1 writer, {TOTAL_BYTES} bytes of batches, one final fdatasync on each side:"
    );
    println!("| entries/batch | WAL MB/s | WAL batches/s | raw write, same chunks, MB/s | WAL/raw | raw write, 1 MiB chunks, MB/s | WAL/raw |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for entries in BATCH_ENTRIES {
        let b = make_batch(entries);
        let len = encoded_len(&b);
        let n = TOTAL_BYTES / len as u64;
        let bytes = (n * len as u64) as f64;
        let mut rows = Vec::new();
        for _ in 0..ROUNDS {
            let dir = tmp();
            let (wal, _) = Wal::open(dir.path(), options()).unwrap();
            let start = Instant::now();
            for _ in 0..n {
                wal.append(&b, Durability::Buffered).unwrap();
            }
            wal.sync().unwrap();
            let t = start.elapsed();
            drop((wal, dir));
            let dir = tmp();
            let same = raw_write_then_sync(dir.path(), len, n);
            let big = raw_write_then_sync(dir.path(), 1 << 20, TOTAL_BYTES >> 20);
            rows.push([
                rate(bytes, t) / 1e6,
                rate(n as f64, t),
                rate(bytes, same) / 1e6,
                rate(TOTAL_BYTES as f64, big) / 1e6,
            ]);
        }
        let col = |i: usize| median(rows.iter().map(|r| r[i]).collect());
        let ratio = |i: usize| median(rows.iter().map(|r| r[0] / r[i]).collect());
        println!(
            "| {entries} | {:.1} | {:.0} | {:.1} | {:.2} | {:.1} | {:.2} |",
            col(0),
            col(1),
            col(2),
            ratio(2),
            col(3),
            ratio(3)
        );
    }

    println!(
        "\nSyncData, 1-entry batches. Peers, measured right before each WAL run: a one-thread"
    );
    println!("loop of 128-byte write + fdatasync, and the same work done by as many threads as");
    println!("writers taking turns under a mutex (no grouping: one sync per write).");
    println!("| writers | WAL batches/s | 1-thread fsync loop /s | WAL / loop | threads taking turns /s | WAL / turns | batches per fsync |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let b = make_batch(1);
    for threads in [1usize, 2, 4, 8] {
        let mut rows = Vec::new();
        for _ in 0..ROUNDS {
            let dir = tmp();
            let n = 300 * threads as u64;
            let loop_rate = rate(300.0, raw_small_write_fsync(dir.path(), 300));
            let turns = rate(n as f64, raw_turns_write_fsync(dir.path(), threads, n));
            let (t, stats) = run_appends(dir.path(), &b, threads, n, Durability::SyncData);
            let bps = rate(stats.batches as f64, t);
            rows.push([
                bps,
                loop_rate,
                bps / loop_rate,
                turns,
                bps / turns,
                stats.batches_per_sync(),
            ]);
        }
        let col = |i: usize| median(rows.iter().map(|r| r[i]).collect());
        println!(
            "| {threads} | {:.0} | {:.0} | {:.2} | {:.0} | {:.2} | {:.2} |",
            col(0),
            col(1),
            col(2),
            col(3),
            col(4),
            col(5)
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
