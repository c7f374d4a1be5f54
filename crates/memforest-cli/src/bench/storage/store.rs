//! The [`Store`] seam every storage peer implements, the durability classes they are
//! matched on, and the db_bench record shape (16-byte keys, 100-byte values).

use rand::rngs::StdRng;
use rand::Rng;
use serde::Serialize;

/// Key length in bytes (db_bench's default `--key_size`).
pub const KEY_LEN: usize = 16;
/// Value length in bytes (db_bench's default `--value_size`).
pub const VALUE_LEN: usize = 100;

/// One record: key `i` as 16 ASCII digits and a 100-byte value.
pub type Record = ([u8; KEY_LEN], [u8; VALUE_LEN]);

/// Key `i`: 16 ASCII digits, so byte order is numeric order.
pub fn key(i: u64) -> [u8; KEY_LEN] {
    let mut out = [b'0'; KEY_LEN];
    let mut n = i;
    for b in out.iter_mut().rev() {
        *b = b'0' + u8::try_from(n % 10).unwrap_or(0);
        n /= 10;
    }
    out
}

/// A value: 50 random bytes then 50 copies of one byte (db_bench's compression ratio 0.5).
pub fn value(rng: &mut StdRng) -> [u8; VALUE_LEN] {
    let mut out = [rng.gen::<u8>(); VALUE_LEN];
    if let Some(head) = out.get_mut(..VALUE_LEN / 2) {
        rng.fill(head);
    }
    out
}

/// When a write counts as done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Each batch reaches the OS (`write(2)`) before the call returns: survives a process
    /// crash, not a power loss (RocksDB `WriteOptions::sync = false`).
    Buffered,
    /// Each batch is `fdatasync`ed before the call returns (RocksDB `sync = true`).
    Sync,
}

/// A key-value engine under test. Every method fails with the engine's own error, wrapped.
pub trait Store: Send + Sync {
    /// How this engine's setting differs from the requested [`Class`]; empty when it is the
    /// same guarantee.
    fn class_note(&self) -> &'static str {
        ""
    }
    /// Writes `batch` atomically with the store's durability class.
    fn write(&self, batch: &[Record]) -> anyhow::Result<()>;
    /// Reads one key; true when found.
    fn get(&self, key: &[u8]) -> anyhow::Result<bool>;
    /// Positions at the first key `>= key` and reads that entry; its key + value bytes, or
    /// `None` past the end.
    fn seek(&self, key: &[u8]) -> anyhow::Result<Option<u64>>;
    /// Scans everything in key order: (entries, key + value bytes).
    fn scan_all(&self) -> anyhow::Result<(u64, u64)>;
    /// Makes everything written so far part of the engine's files (memtable flush, WAL
    /// checkpoint, durable commit) so write and space amplification include it.
    fn settle(&self) -> anyhow::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn keys_sort_numerically() {
        assert_eq!(&key(42), b"0000000000000042");
        assert!(key(9) < key(10));
        assert_eq!(&key(u64::MAX)[..], b"8446744073709551615"[3..].as_ref());
    }

    #[test]
    fn values_are_half_random() {
        let mut rng = StdRng::seed_from_u64(1);
        let v = value(&mut rng);
        let tail = v[VALUE_LEN / 2];
        assert!(v[VALUE_LEN / 2..].iter().all(|&b| b == tail));
        assert_ne!(value(&mut rng), v);
    }
}
