//! Engine over a damaged WAL: the configured `RecoveryMode` decides for the WAL (and only
//! the WAL). A torn tail costs exactly the batch it cut under the default mode, is refused
//! under `AbsoluteConsistency` with an error naming the segment, and data already flushed
//! to segment files is never affected.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::fs;
use std::path::{Path, PathBuf};

use memforest_engine::{Db, Durability, Error, Options, RecoveryMode, Table, TenantId, WAL_DIR};
use memforest_wal::WalError;

fn options(mode: RecoveryMode) -> Options {
    Options {
        recovery_mode: mode,
        ..Options::default()
    }
}

fn last_wal_segment(dir: &Path) -> PathBuf {
    let mut segs: Vec<PathBuf> = fs::read_dir(dir.join(WAL_DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    segs.sort();
    segs.pop().unwrap()
}

/// 10 flushed batches, then 10 more only in the WAL, then a crash; returns the directory.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let t = TenantId::new("t").unwrap();
    for i in 0..20u8 {
        db.put(&t, Table::new(2), &[i], &[i; 300], Durability::SyncData)
            .unwrap();
        if i == 9 {
            db.flush().unwrap();
        }
    }
    // Ended by a crash: only then can the WAL's end be torn (a clean close records its
    // synced length, and an open refuses a WAL cut short of it).
    drop(db);
    dir
}

fn present(db: &Db) -> Vec<u8> {
    let t = TenantId::new("t").unwrap();
    (0..20u8)
        .filter(|i| db.get(&t, Table::new(2), &[*i]).unwrap().is_some())
        .collect()
}

#[test]
fn torn_wal_tail_loses_only_the_cut_batch() {
    let dir = setup();
    let seg = last_wal_segment(dir.path());
    let len = fs::metadata(&seg).unwrap().len();
    // Cut into the last batch (each is a little over 300 bytes).
    fs::OpenOptions::new()
        .write(true)
        .open(&seg)
        .unwrap()
        .set_len(len - 100)
        .unwrap();

    match Db::open(dir.path(), options(RecoveryMode::AbsoluteConsistency)) {
        Err(Error::Wal(WalError::Corruption { .. })) => {}
        other => panic!("expected a WAL corruption error, got {other:?}"),
    }
    let db = Db::open(dir.path(), options(RecoveryMode::TolerateCorruptedTail)).unwrap();
    assert_eq!(present(&db), (0..19).collect::<Vec<u8>>());
}

#[test]
fn flushed_data_survives_a_wal_garbled_mid_log() {
    let dir = setup();
    let seg = last_wal_segment(dir.path());
    let mut bytes = fs::read(&seg).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xFF;
    fs::write(&seg, bytes).unwrap();
    // Point-in-time recovery keeps the WAL prefix before the damage; the flushed batches
    // 0..10 come from segment files whatever the WAL holds.
    let db = Db::open(dir.path(), options(RecoveryMode::PointInTime)).unwrap();
    let got = present(&db);
    assert!(got.len() >= 10 && got.len() < 20, "{got:?}");
    assert_eq!(got, (0..got.len() as u8).collect::<Vec<u8>>(), "a prefix");
    // New writes get seqnos above everything flushed (the WAL is padded with no-ops), so
    // they win over older versions and survive another reopen.
    let t = TenantId::new("t").unwrap();
    db.put(&t, Table::new(2), &[0], b"new", Durability::SyncData)
        .unwrap();
    assert!(db.seqno() > 10);
    db.close().unwrap();
    let db = Db::open(dir.path(), options(RecoveryMode::PointInTime)).unwrap();
    assert_eq!(
        db.get(&t, Table::new(2), &[0]).unwrap().as_deref(),
        Some(&b"new"[..])
    );
    assert_eq!(present(&db), got);
}
