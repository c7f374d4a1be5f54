//! Write, read, flush, compaction and reopen of a single database.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::ops::Bound;

use memforest_engine::{
    Db, Durability, Options, Table, TenantId, WalCompression, WriteBatch, WAL_DIR,
};

fn small_options() -> Options {
    Options {
        memtable_size: 16 << 10,
        l0_compaction_trigger: 2,
        max_bytes_for_level_base: 64 << 10,
        target_file_size: 16 << 10,
        ..Options::default()
    }
}

fn collect(scan: memforest_engine::Scan) -> Vec<(Vec<u8>, Vec<u8>)> {
    scan.map(|r| {
        let (k, v) = r.unwrap();
        (k.to_vec(), v.to_vec())
    })
    .collect()
}

#[test]
fn write_read_delete_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::new("alice").unwrap();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        let mut b = WriteBatch::new();
        b.put(&t, Table::Facts, b"a", b"1");
        b.put(&t, Table::Facts, b"b", b"2");
        b.put(&t, Table::Turns, b"a", b"turn");
        db.write(&b, Durability::Buffered).unwrap();
        assert_eq!(
            db.get(&t, Table::Facts, b"a").unwrap().as_deref(),
            Some(&b"1"[..])
        );
        assert_eq!(db.get(&t, Table::Sessions, b"a").unwrap(), None);
        let mut d = WriteBatch::new();
        d.delete(&t, Table::Facts, b"a");
        db.write(&d, Durability::SyncData).unwrap();
        assert_eq!(db.get(&t, Table::Facts, b"a").unwrap(), None);
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(db.get(&t, Table::Facts, b"a").unwrap(), None);
    assert_eq!(
        db.get(&t, Table::Facts, b"b").unwrap().as_deref(),
        Some(&b"2"[..])
    );
    let all = collect(
        db.scan(&t, Table::Facts, Bound::Unbounded, Bound::Unbounded, None)
            .unwrap(),
    );
    assert_eq!(all, vec![(b"b".to_vec(), b"2".to_vec())]);
}

/// 16 KiB memtables sealed faster than they flush, and a level-0 trigger of one file, leave
/// flushes and compactions due when the writes end; `wait_for_compact` returns only once
/// the sealed memtables are flushed and no compaction is due.
#[test]
fn wait_for_compact_returns_with_no_compaction_due() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::new("t").unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            l0_compaction_trigger: 1,
            ..small_options()
        },
    )
    .unwrap();
    for i in 0..3000u32 {
        let k = format!("key{:06}", (i * 7919) % 3000);
        db.put(
            &t,
            Table::Facts,
            k.as_bytes(),
            &[b'v'; 100],
            Durability::Buffered,
        )
        .unwrap();
    }
    db.wait_for_compact().unwrap();
    let s = db.stats();
    assert_eq!(s.immutable_memtables, 0, "{s:?}");
    assert_eq!(s.levels[0].files, 0, "{s:?}");
    assert!(s.compaction_count >= 1, "{s:?}");
    let all = collect(
        db.scan(&t, Table::Facts, Bound::Unbounded, Bound::Unbounded, None)
            .unwrap(),
    );
    assert_eq!(all.len(), 3000);
    db.close().unwrap();
}

#[test]
fn many_writes_flush_compact_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::new("t").unwrap();
    let n = 5000u32;
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        for i in 0..n {
            let k = format!("key{:06}", (i * 7919) % n);
            db.put(
                &t,
                Table::Facts,
                k.as_bytes(),
                format!("v{i}").as_bytes(),
                Durability::Buffered,
            )
            .unwrap();
        }
        db.flush().unwrap();
        let s = db.stats();
        assert!(s.flush_count >= 2, "{s:?}");
        db.compact_all().unwrap();
        let s = db.stats();
        assert!(s.compaction_count >= 1, "{s:?}");
        assert_eq!(s.levels[0].files, 0, "{s:?}");
        for i in (0..n).step_by(97) {
            let k = format!("key{:06}", (i * 7919) % n);
            assert_eq!(
                db.get(&t, Table::Facts, k.as_bytes()).unwrap().unwrap(),
                format!("v{i}").as_bytes()
            );
        }
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    let all = collect(
        db.scan(&t, Table::Facts, Bound::Unbounded, Bound::Unbounded, None)
            .unwrap(),
    );
    assert_eq!(all.len(), n as usize);
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
}

/// The default filter scope leaves scan-only keys (lexical postings, the fact time index)
/// out of segment filters; point reads of them still find them from the index, with the
/// engine's scope and with a store reopened without one.
#[test]
fn keys_left_out_of_filters_are_still_found() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::new("t").unwrap();
    let keys: Vec<(Table, Vec<u8>)> = (0..200u32)
        .flat_map(|i| {
            [
                (Table::Postings, format!("tword{i}\0").into_bytes()),
                (Table::Postings, format!("o{i:08}").into_bytes()),
                (Table::FactTimeIndex, i.to_be_bytes().to_vec()),
                (Table::Facts, i.to_be_bytes().to_vec()),
            ]
        })
        .collect();
    let all_found = |db: &Db| {
        for (table, key) in &keys {
            assert_eq!(
                db.get(&t, *table, key).unwrap().as_deref(),
                Some(&key[..]),
                "{table:?} {key:?}"
            );
        }
    };
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        for (table, key) in &keys {
            db.put(&t, *table, key, key, Durability::Buffered).unwrap();
        }
        db.flush().unwrap();
        assert!(db.stats().flush_count >= 1);
        all_found(&db);
        db.close().unwrap();
    }
    let mut unscoped = small_options();
    unscoped.sst.filter_scope = None;
    let db = Db::open(dir.path(), unscoped).unwrap();
    all_found(&db);
}

/// `Options::wal_compression`: off by default (RocksDB `wal_compression`), zstd for large
/// batches when asked; both logs replay at reopen (a drop does not flush).
#[test]
fn wal_compression_is_an_option_and_both_logs_replay() {
    let t = TenantId::new("alice").unwrap();
    let mut wal_bytes = Vec::new();
    for compression in [WalCompression::default(), WalCompression::LARGE_BATCHES] {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            wal_compression: compression,
            ..Options::default()
        };
        {
            let db = Db::open(dir.path(), options.clone()).unwrap();
            let mut b = WriteBatch::new();
            for i in 0..100u32 {
                b.put(&t, Table::Facts, &i.to_be_bytes(), &[b'x'; 1000]);
            }
            db.write(&b, Durability::SyncData).unwrap();
            let wal = std::fs::read_dir(dir.path().join(WAL_DIR)).unwrap();
            wal_bytes.push(
                wal.map(|e| e.unwrap().metadata().unwrap().len())
                    .sum::<u64>(),
            );
            drop(db); // no flush: reopening replays the WAL
        }
        let db = Db::open(dir.path(), options).unwrap();
        for i in 0..100u32 {
            let v = db.get(&t, Table::Facts, &i.to_be_bytes()).unwrap().unwrap();
            assert_eq!(&v[..], &[b'x'; 1000][..]);
        }
        db.close().unwrap();
    }
    // 100 KB of values: logged whole by default, a small zstd frame when compressed.
    assert!(wal_bytes[0] > 100_000, "{wal_bytes:?}");
    assert!(wal_bytes[1] < 10_000, "{wal_bytes:?}");
}
