//! db_bench-style workloads run against memforest-engine and fjall in the same process,
//! both with buffered durability (each write reaches the OS page cache before it returns,
//! no fsync): `fillseq`, `fillrandom`, `overwrite`, `readrandom`, `readseq`; 16-byte keys,
//! 100-byte values (half random, half repeated, like db_bench's 0.5 compression ratio).
//!
//! Shared by the `db_bench` example (which prints the table) and the criterion bench
//! `benches/benches/engine.rs`.

use std::ops::Bound;
use std::path::Path;
use std::time::{Duration, Instant};

use memforest_engine::{Db, Durability, Options, Table, TenantId};

/// The table every workload writes (tags are the application's).
const RECORDS: Table = Table::new(1);
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Key length in bytes.
pub const KEY_LEN: usize = 16;
/// Value length in bytes.
pub const VALUE_LEN: usize = 100;

/// Key `i`: 16 ASCII digits.
pub fn key(i: u64) -> [u8; KEY_LEN] {
    let mut out = [0u8; KEY_LEN];
    out.copy_from_slice(format!("{i:016}").as_bytes());
    out
}

/// A value: 50 random bytes then 50 copies of one byte.
pub fn value(rng: &mut StdRng) -> [u8; VALUE_LEN] {
    let mut out = [rng.gen::<u8>(); VALUE_LEN];
    rng.fill(&mut out[..VALUE_LEN / 2]);
    out
}

/// An engine under test.
pub trait Store {
    /// Engine name for the report.
    fn name(&self) -> &'static str;
    /// Writes one key (buffered durability).
    fn put(&self, key: &[u8], value: &[u8]);
    /// Reads one key; true when found.
    fn get(&self, key: &[u8]) -> bool;
    /// Scans everything in key order; returns (entries, key + value bytes).
    fn scan_all(&self) -> (u64, u64);
    /// Waits until memtables are flushed (so background write volume is settled).
    fn flush(&self);
    /// Engine statistics worth printing, if any.
    fn describe(&self) -> Option<String> {
        None
    }
}

/// memforest-engine with default options, one tenant, the facts table.
pub struct Memforest {
    /// The database.
    pub db: Db,
    tenant: TenantId,
}

impl Memforest {
    /// Opens a database in `dir`.
    pub fn open(dir: &Path) -> Self {
        Self {
            db: Db::open(dir, Options::default()).unwrap(),
            tenant: TenantId::new("bench").unwrap(),
        }
    }
}

impl Store for Memforest {
    fn name(&self) -> &'static str {
        "memforest"
    }
    fn put(&self, key: &[u8], value: &[u8]) {
        self.db
            .put(&self.tenant, RECORDS, key, value, Durability::Buffered)
            .unwrap();
    }
    fn get(&self, key: &[u8]) -> bool {
        self.db.get(&self.tenant, RECORDS, key).unwrap().is_some()
    }
    fn scan_all(&self) -> (u64, u64) {
        let scan = self
            .db
            .scan(
                &self.tenant,
                RECORDS,
                Bound::Unbounded,
                Bound::Unbounded,
                None,
            )
            .unwrap();
        scan.fold((0, 0), |(n, b), r| {
            let (k, v) = r.unwrap();
            (n + 1, b + (k.len() + v.len()) as u64)
        })
    }
    fn flush(&self) {
        self.db.flush().unwrap();
    }
    fn describe(&self) -> Option<String> {
        let s = self.db.stats();
        let levels: Vec<String> = s
            .levels
            .iter()
            .map(|l| format!("{}/{}MB", l.files, l.bytes >> 20))
            .collect();
        Some(format!(
            "flushes {} ({} ms), compactions {} ({} ms), stalls memtable {} ({} ms) l0 {} ({} ms), w-amp {:.2}, space-amp {:.2}, levels {}",
            s.flush_count,
            s.flush_micros / 1000,
            s.compaction_count,
            s.compaction_micros / 1000,
            s.stall_memtable_count,
            s.stall_memtable_micros / 1000,
            s.stall_l0_count,
            s.stall_l0_micros / 1000,
            s.write_amplification,
            s.space_amplification,
            levels.join(" ")
        ))
    }
}

/// fjall with default options except no compression (memforest's default), one keyspace.
pub struct Fjall {
    _db: fjall::Database,
    ks: fjall::Keyspace,
}

impl Fjall {
    /// Opens a database in `dir`.
    pub fn open(dir: &Path) -> Self {
        let db = fjall::Database::builder(dir).open().unwrap();
        let ks = db
            .keyspace("bench", || {
                fjall::KeyspaceCreateOptions::default()
                    .data_block_compression_policy(fjall::config::CompressionPolicy::disabled())
            })
            .unwrap();
        Self { _db: db, ks }
    }
}

impl Store for Fjall {
    fn name(&self) -> &'static str {
        "fjall"
    }
    fn put(&self, key: &[u8], value: &[u8]) {
        self.ks.insert(key, value).unwrap();
    }
    fn get(&self, key: &[u8]) -> bool {
        self.ks.get(key).unwrap().is_some()
    }
    fn scan_all(&self) -> (u64, u64) {
        self.ks.iter().fold((0, 0), |(n, b), g| {
            let (k, v) = g.into_inner().unwrap();
            (n + 1, b + (k.len() + v.len()) as u64)
        })
    }
    fn flush(&self) {
        self.ks.rotate_memtable_and_wait().unwrap();
    }
}

/// The db_bench workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// `n` puts in key order into an empty database.
    FillSeq,
    /// `n` puts in random order into an empty database.
    FillRandom,
    /// `n` puts of random existing keys.
    Overwrite,
    /// `n` gets of random existing keys.
    ReadRandom,
    /// One full scan.
    ReadSeq,
}

impl Workload {
    /// db_bench's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::FillSeq => "fillseq",
            Self::FillRandom => "fillrandom",
            Self::Overwrite => "overwrite",
            Self::ReadRandom => "readrandom",
            Self::ReadSeq => "readseq",
        }
    }
}

/// What one workload measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Operations (entries for readseq).
    pub ops: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Key + value bytes moved.
    pub bytes: u64,
    /// Per-op latencies in nanoseconds, sorted (empty for readseq).
    pub latencies: Vec<u64>,
}

impl Report {
    /// Microseconds per operation.
    pub fn micros_per_op(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1e6 / self.ops.max(1) as f64
    }
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }
    /// MB/s of key + value bytes.
    pub fn mb_per_sec(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.elapsed.as_secs_f64()
    }
    /// Latency percentile `p` (0..=100) in microseconds.
    pub fn percentile_micros(&self, p: usize) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let last = self.latencies.len() - 1;
        let at = (last * p / 100).min(last);
        self.latencies[at] as f64 / 1e3
    }
}

/// Runs `w` with `n` operations over keys `0..n` (seeded, so both engines see the same
/// sequence).
pub fn run(store: &dyn Store, w: Workload, n: u64, seed: u64) -> Report {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut latencies = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
    let start = Instant::now();
    if w == Workload::ReadSeq {
        let (ops, bytes) = store.scan_all();
        return Report {
            ops,
            elapsed: start.elapsed(),
            bytes,
            latencies,
        };
    }
    let mut bytes = 0;
    for i in 0..n {
        let k = match w {
            Workload::FillSeq => key(i),
            _ => key(rng.gen_range(0..n)),
        };
        let t = Instant::now();
        if w == Workload::ReadRandom {
            if store.get(&k) {
                bytes += (KEY_LEN + VALUE_LEN) as u64;
            }
        } else {
            let v = value(&mut rng);
            store.put(&k, &v);
            bytes += (KEY_LEN + VALUE_LEN) as u64;
        }
        latencies.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    let elapsed = start.elapsed();
    latencies.sort_unstable();
    Report {
        ops: n,
        elapsed,
        bytes,
        latencies,
    }
}

/// Bytes this process has passed to `write(2)`-family calls (`wchar` in `/proc/self/io`),
/// or 0 where that file does not exist.
pub fn process_bytes_written() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("wchar: ").map(|n| n.trim().parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

/// Flushes `store` and waits until the process stops writing (background compactions
/// done, up to `limit`), so a write-amplification figure includes them.
pub fn settle(store: &dyn Store, limit: Duration) {
    store.flush();
    let start = Instant::now();
    let mut last = process_bytes_written();
    while start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(300));
        let now = process_bytes_written();
        if now == last {
            break;
        }
        last = now;
    }
}
