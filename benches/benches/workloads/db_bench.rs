//! db_bench-style fills run against memforest-engine and fjall in the same process, both
//! with buffered durability (each write reaches the OS page cache before it returns, no
//! fsync): `fillseq` and `fillrandom`; 16-byte keys, 100-byte values (half random, half
//! repeated, like db_bench's 0.5 compression ratio).
//!
//! Used by the criterion bench `benches/benches/engine.rs`; `memforest bench storage` runs
//! every db_bench workload at scale against more peers.

use std::path::Path;
use std::time::{Duration, Instant};

use memforest_engine::{Db, Durability, Options, Table, TenantId};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The table every workload writes (tags are the application's).
const RECORDS: Table = Table::new(1);

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
    /// Writes one key (buffered durability).
    fn put(&self, key: &[u8], value: &[u8]);
    /// Reads one key; true when found.
    fn get(&self, key: &[u8]) -> bool;
    /// Waits until memtables are flushed, so reads go to segment files.
    fn flush(&self);
}

/// memforest-engine with default options, one tenant, one table.
pub struct Memforest {
    db: Db,
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
    fn put(&self, key: &[u8], value: &[u8]) {
        self.db
            .put(&self.tenant, RECORDS, key, value, Durability::Buffered)
            .unwrap();
    }
    fn get(&self, key: &[u8]) -> bool {
        self.db.get(&self.tenant, RECORDS, key).unwrap().is_some()
    }
    fn flush(&self) {
        self.db.flush().unwrap();
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
    fn put(&self, key: &[u8], value: &[u8]) {
        self.ks.insert(key, value).unwrap();
    }
    fn get(&self, key: &[u8]) -> bool {
        self.ks.get(key).unwrap().is_some()
    }
    fn flush(&self) {
        self.ks.rotate_memtable_and_wait().unwrap();
    }
}

/// The db_bench fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// `n` puts in key order into an empty database.
    FillSeq,
    /// `n` puts of random keys of `0..n` into an empty database.
    FillRandom,
}

impl Workload {
    /// db_bench's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::FillSeq => "fillseq",
            Self::FillRandom => "fillrandom",
        }
    }
}

/// Runs `w` with `n` puts over keys `0..n` (seeded, so both engines see the same
/// sequence) and returns its wall time.
pub fn fill(store: &dyn Store, w: Workload, n: u64, seed: u64) -> Duration {
    let mut rng = StdRng::seed_from_u64(seed);
    let start = Instant::now();
    for i in 0..n {
        let k = match w {
            Workload::FillSeq => key(i),
            Workload::FillRandom => key(rng.gen_range(0..n)),
        };
        store.put(&k, &value(&mut rng));
    }
    start.elapsed()
}
