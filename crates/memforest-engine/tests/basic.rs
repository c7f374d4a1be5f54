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
        b.put(&t, Table::new(3), b"a", b"1");
        b.put(&t, Table::new(3), b"b", b"2");
        b.put(&t, Table::new(2), b"a", b"turn");
        db.write(&b, Durability::Buffered).unwrap();
        assert_eq!(
            db.get(&t, Table::new(3), b"a").unwrap().as_deref(),
            Some(&b"1"[..])
        );
        assert_eq!(db.get(&t, Table::new(1), b"a").unwrap(), None);
        let mut d = WriteBatch::new();
        d.delete(&t, Table::new(3), b"a");
        db.write(&d, Durability::SyncData).unwrap();
        assert_eq!(db.get(&t, Table::new(3), b"a").unwrap(), None);
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(db.get(&t, Table::new(3), b"a").unwrap(), None);
    assert_eq!(
        db.get(&t, Table::new(3), b"b").unwrap().as_deref(),
        Some(&b"2"[..])
    );
    let all = collect(
        db.scan(&t, Table::new(3), Bound::Unbounded, Bound::Unbounded, None)
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
            Table::new(3),
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
        db.scan(&t, Table::new(3), Bound::Unbounded, Bound::Unbounded, None)
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
                Table::new(3),
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
                db.get(&t, Table::new(3), k.as_bytes()).unwrap().unwrap(),
                format!("v{i}").as_bytes()
            );
        }
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    let all = collect(
        db.scan(&t, Table::new(3), Bound::Unbounded, Bound::Unbounded, None)
            .unwrap(),
    );
    assert_eq!(all.len(), n as usize);
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
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
                b.put(&t, Table::new(3), &i.to_be_bytes(), &[b'x'; 1000]);
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
            let v = db
                .get(&t, Table::new(3), &i.to_be_bytes())
                .unwrap()
                .unwrap();
            assert_eq!(&v[..], &[b'x'; 1000][..]);
        }
        db.close().unwrap();
    }
    // 100 KB of values: logged whole by default, a small zstd frame when compressed.
    assert!(wal_bytes[0] > 100_000, "{wal_bytes:?}");
    assert!(wal_bytes[1] < 10_000, "{wal_bytes:?}");
}
