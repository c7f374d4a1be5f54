//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use memforest_wal::{
    Compression, Durability, Recovered, RecoveryMode, Result, Wal, WalOptions, WriteBatch,
};

/// A deterministic batch: `entries` entries whose values are `value_len` bytes derived
/// from `tag`.
pub fn batch(tag: u64, entries: usize, value_len: usize) -> WriteBatch {
    let mut b = WriteBatch::new();
    for i in 0..entries {
        let value: Vec<u8> = (0..value_len)
            .map(|j| (tag as usize * 31 + i * 7 + j) as u8)
            .collect();
        b.push((i % 3) as u8, format!("key-{tag}-{i}"), value);
    }
    b
}

/// Options with compression off and the given mode.
pub fn options(mode: RecoveryMode) -> WalOptions {
    WalOptions {
        recovery_mode: mode,
        compression: Compression {
            threshold: None,
            level: 1,
        },
        ..WalOptions::default()
    }
}

/// Opens `dir` with `mode`.
pub fn open(dir: &Path, mode: RecoveryMode) -> Result<(Wal, Recovered)> {
    Wal::open(dir, options(mode))
}

/// Writes `batches` to a fresh log in `dir` and closes it.
pub fn write_log(dir: &Path, batches: &[WriteBatch], opts: WalOptions) {
    let (wal, rec) = Wal::open(dir, opts).unwrap();
    assert!(rec.batches.is_empty());
    for b in batches {
        wal.append(b, Durability::Buffered).unwrap();
    }
}

/// The recovered batches' contents.
pub fn contents(rec: &Recovered) -> Vec<WriteBatch> {
    rec.batches.iter().map(|b| b.batch.clone()).collect()
}

/// Path of segment `id` in `dir`.
pub fn seg(dir: &Path, id: u64) -> PathBuf {
    memforest_wal::segment::path(dir, id)
}

/// Copies the directory `from` into a fresh temp dir.
pub fn copy_dir(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.path().join(e.file_name())).unwrap();
    }
    to
}
