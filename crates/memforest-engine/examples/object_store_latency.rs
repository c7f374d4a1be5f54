//! Ingest throughput and point-read latency of the engine on local disk against the same
//! workload with an object-storage tier whose every request waits a fixed latency (an
//! in-memory store behind `object_store`'s `ThrottledStore`), measured in one run.
//!
//! ```sh
//! cargo run --release -p memforest-engine --example object_store_latency -- [KEYS] [LATENCY_MS]
//! ```
//!
//! Prints two tables. The first: ingest (writes, then `Db::flush`, which for the object
//! store includes the uploads and the publication), point reads on the writer (warm: its
//! files are local), the open of an empty directory (cold: the object store's files are
//! fetched) and point reads after it. The second: an empty directory opened on the object
//! store with a local cache of a quarter of the live bytes (`Options::remote_cache_bytes`):
//! reads of a hot eighth of the keys after one pass over them (warm), and reads of random
//! keys, most of which find their block or file out of the cache (cold), next to local
//! disk, with the GETs and bytes the cold reads fetched per read.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark script")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use memforest_engine::{Db, Durability, Options, Table, TenantId};
use memforest_object::object_store::memory::InMemory;
use memforest_object::object_store::throttle::{ThrottleConfig, ThrottledStore};
use memforest_object::{FaultStore, Remote};
use rand::{Rng, SeedableRng};

const T: Table = Table::new(1);
const READS: usize = 20_000;
/// Reads of the cold cached measurement (most of them fetch a file).
const COLD_READS: usize = 1_000;
/// Segment files of about this many bytes, so that a quarter of the live set is several.
const FILE_SIZE: u64 = 4 << 20;

struct Figures {
    ingest_keys_per_s: f64,
    warm: (Duration, Duration),
    cold_open: Duration,
    cold: (Duration, Duration),
    /// Reads of the hot eighth of the keys after the cold reads.
    hot: (Duration, Duration),
}

fn key(i: u64) -> Vec<u8> {
    format!("{i:016}").into_bytes()
}

/// p50 and p99 of `READS` random point reads of keys below `keys`.
fn read_latency(db: &Db, keys: u64) -> (Duration, Duration) {
    sample(db, 0..keys, READS)
}

/// p50 and p99 of `reads` random point reads of keys in `range`.
fn sample(db: &Db, range: std::ops::Range<u64>, reads: usize) -> (Duration, Duration) {
    let tenant = TenantId::new("bench").unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mut times: Vec<Duration> = (0..reads)
        .map(|_| {
            let k = key(rng.gen_range(range.clone()));
            let start = Instant::now();
            assert!(db.get(&tenant, T, &k).unwrap().is_some());
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    (times[reads / 2], times[reads * 99 / 100])
}

/// What the bounded-cache run measured.
struct Cached {
    warm: (Duration, Duration),
    cold: (Duration, Duration),
    /// GETs per cold read.
    cold_gets: f64,
    /// Bytes fetched per cold read.
    cold_bytes: f64,
}

/// Warm and cold read latency of an empty directory opened on `remote` (over `counts`)
/// with a cache of a quarter of the live bytes: reads of the first eighth of the keys
/// after one pass over them, then reads over all keys.
fn cached_run(keys: u64, remote: Arc<Remote>, counts: &FaultStore) -> Cached {
    let (_, state) = memforest_engine::remote::newest(&remote).unwrap().unwrap();
    let live: u64 = state.segments.iter().map(|(_, s)| s.file_size).sum();
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        remote_cache_bytes: Some(live / 4),
        ..options(Some(remote))
    };
    let db = Db::open(dir.path(), options).unwrap();
    let hot = hot_keys(keys);
    let tenant = TenantId::new("bench").unwrap();
    for i in hot.clone() {
        assert!(db.get(&tenant, T, &key(i)).unwrap().is_some());
    }
    let warm = sample(&db, hot, READS);
    let (gets, bytes) = (counts.gets(), counts.got_bytes());
    let cold = sample(&db, 0..keys, COLD_READS);
    let per_read = |n: u64| n as f64 / COLD_READS as f64;
    let cached = Cached {
        warm,
        cold,
        cold_gets: per_read(counts.gets() - gets),
        cold_bytes: per_read(counts.got_bytes() - bytes),
    };
    db.close().unwrap();
    cached
}

/// The hot eighth of the keys.
fn hot_keys(keys: u64) -> std::ops::Range<u64> {
    0..keys / 8
}

fn options(remote: Option<Arc<Remote>>) -> Options {
    Options {
        memtable_size: 8 << 20,
        target_file_size: FILE_SIZE,
        remote,
        ..Options::default()
    }
}

fn run(keys: u64, remote: Option<&dyn Fn() -> Arc<Remote>>) -> Figures {
    let options = || options(remote.map(|r| r()));
    let tenant = TenantId::new("bench").unwrap();
    let value = vec![b'v'; 100];
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let start = Instant::now();
    for i in 0..keys {
        db.put(&tenant, T, &key(i), &value, Durability::Buffered)
            .unwrap();
    }
    db.flush().unwrap();
    let ingest = start.elapsed();
    db.wait_for_compact().unwrap();
    db.flush().unwrap();
    let warm = read_latency(&db, keys);
    db.close().unwrap();

    // Cold: a new machine for the object store; the same directory reopened for disk.
    let fresh = tempfile::tempdir().unwrap();
    let cold_dir = if remote.is_some() {
        fresh.path()
    } else {
        dir.path()
    };
    let start = Instant::now();
    let db = Db::open(cold_dir, options()).unwrap();
    let cold_open = start.elapsed();
    let cold = read_latency(&db, keys);
    let hot = sample(&db, hot_keys(keys), READS);
    db.close().unwrap();
    Figures {
        ingest_keys_per_s: keys as f64 / ingest.as_secs_f64(),
        warm,
        cold_open,
        cold,
        hot,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let keys: u64 = args.next().map_or(1_000_000, |a| a.parse().expect("KEYS"));
    let latency_ms: u64 = args.next().map_or(30, |a| a.parse().expect("LATENCY_MS"));
    let latency = Duration::from_millis(latency_ms);
    let store = Arc::new(FaultStore::new(Arc::new(ThrottledStore::new(
        InMemory::new(),
        ThrottleConfig {
            wait_get_per_call: latency,
            wait_put_per_call: latency,
            wait_list_per_call: latency,
            wait_delete_per_call: latency,
            ..ThrottleConfig::default()
        },
    ))));
    let remote = || Arc::new(Remote::new(Arc::clone(&store) as _, "bench").unwrap());
    let disk = run(keys, None);
    let object = run(keys, Some(&remote));
    let cached = cached_run(keys, remote(), &store);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{keys} keys of 16 B with 100 B values, segment files of {} MiB; object store: \
         {latency_ms} ms per request",
        FILE_SIZE >> 20
    );
    println!("| | local disk | object store | ratio |");
    println!("| --- | --- | --- | --- |");
    let row = |name: &str, a: f64, b: f64, unit: &str| {
        println!("| {name} | {a:.1} {unit} | {b:.1} {unit} | {:.2}x |", b / a);
    };
    row(
        "ingest + flush",
        disk.ingest_keys_per_s,
        object.ingest_keys_per_s,
        "keys/s",
    );
    row("warm get p50", us(disk.warm.0), us(object.warm.0), "µs");
    row("warm get p99", us(disk.warm.1), us(object.warm.1), "µs");
    row(
        "cold open (empty directory for the object store)",
        disk.cold_open.as_secs_f64() * 1e3,
        object.cold_open.as_secs_f64() * 1e3,
        "ms",
    );
    row(
        "get p50 after cold open",
        us(disk.cold.0),
        us(object.cold.0),
        "µs",
    );
    row(
        "get p99 after cold open",
        us(disk.cold.1),
        us(object.cold.1),
        "µs",
    );
    let p50_p99 = |name: &str, a: (Duration, Duration), b: (Duration, Duration)| {
        row(&format!("{name} p50"), us(a.0), us(b.0), "µs");
        row(&format!("{name} p99"), us(a.1), us(b.1), "µs");
    };
    println!();
    println!("| cache of 1/4 of the live bytes | local disk | object store | ratio |");
    println!("| --- | --- | --- | --- |");
    p50_p99("warm get (hot 1/8 of the keys)", disk.hot, cached.warm);
    p50_p99("cold get (all keys)", disk.cold, cached.cold);
    println!("| GETs per cold get | 0 | {:.2} | |", cached.cold_gets);
    println!(
        "| KiB fetched per cold get | 0 | {:.1} | |",
        cached.cold_bytes / 1024.0
    );
}
