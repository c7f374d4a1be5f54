//! Helpers shared by the integration tests.
// Helpers are test code: a failed unwrap is a failed test; not every test uses every helper.
#![allow(dead_code, clippy::unwrap_used, clippy::cast_possible_truncation)]

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

/// Offsets of the batches in segment `id` of `dir` (read with a clean, in-memory replay).
pub fn batch_offsets(dir: &Path, id: u64) -> Vec<u64> {
    let bytes = std::fs::read(seg(dir, id)).unwrap();
    let image = memforest_wal::recovery::SegmentImage { id, bytes: &bytes };
    let plan = memforest_wal::recovery::plan(
        &[image],
        RecoveryMode::AbsoluteConsistency,
        &|_| None,
        &|_, _| false,
    )
    .unwrap();
    plan.batches.iter().map(|b| b.offset).collect()
}

/// Applies `edit` to the bytes of segment `id`.
pub fn edit_segment(dir: &Path, id: u64, edit: impl FnOnce(&mut Vec<u8>)) {
    let path = seg(dir, id);
    let mut bytes = std::fs::read(&path).unwrap();
    edit(&mut bytes);
    std::fs::write(&path, bytes).unwrap();
}
