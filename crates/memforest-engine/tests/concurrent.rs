//! Concurrent writers (group commit, out-of-order memtable inserts published in seqno
//! order), readers and snapshots, with a memtable small enough that writers stall on
//! flushes. Every reader must see each writer's sequence as a prefix (no gaps), and a
//! snapshot must never change.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use memforest_engine::{Db, Durability, Options, Table, TenantId, WriteBatch};

const WRITERS: u32 = 4;
const PER_WRITER: u32 = 3000;

fn count(db: &Db, t: &TenantId, snap: Option<&memforest_engine::Snapshot>) -> Vec<u32> {
    let keys: Vec<Vec<u8>> = db
        .scan(t, Table::new(2), Bound::Unbounded, Bound::Unbounded, snap)
        .unwrap()
        .map(|r| r.unwrap().0.to_vec())
        .collect();
    let mut per = vec![0u32; WRITERS as usize];
    for k in keys {
        per[usize::from(k[0])] += 1;
    }
    per
}

#[test]
fn writers_readers_and_snapshots_agree() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        memtable_size: 16 << 10,
        max_immutable_memtables: 1,
        l0_compaction_trigger: 2,
        l0_stop_writes_trigger: 4,
        target_file_size: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        ..Options::default()
    };
    let db = Arc::new(Db::open(dir.path(), options).unwrap());
    let t = TenantId::new("shared").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (db, t, stop) = (Arc::clone(&db), t.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let snap = db.snapshot();
                let a = count(&db, &t, Some(&snap));
                // Each writer's keys are written in order, so a reader sees a prefix.
                for (w, n) in a.iter().enumerate() {
                    if *n > 0 {
                        let last = [w as u8, 0, 0, 0];
                        let mut k = last;
                        k[1..].copy_from_slice(&(n - 1).to_be_bytes()[1..]);
                        assert!(db.get_at(&snap, &t, Table::new(2), &k).unwrap().is_some());
                    }
                }
                assert_eq!(count(&db, &t, Some(&snap)), a, "a snapshot changed");
            }
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, t) = (Arc::clone(&db), t.clone());
            std::thread::spawn(move || {
                for i in 0..PER_WRITER {
                    let mut k = i.to_be_bytes();
                    k[0] = w as u8;
                    let mut b = WriteBatch::new();
                    b.put(&t, Table::new(2), &k, &[1u8; 64]);
                    db.write(&b, Durability::Buffered).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    assert_eq!(count(&db, &t, None), vec![PER_WRITER; WRITERS as usize]);
    let stats = db.stats();
    assert!(stats.flush_count > 0 && stats.user_bytes > 0, "{stats:?}");
    assert!(stats.write_amplification > 1.0, "{stats:?}");
}

#[test]
fn writers_wait_for_queued_flushes_and_the_stall_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        memtable_size: 8 << 10,
        max_immutable_memtables: 1,
        ..Options::default()
    };
    let db = Db::open(dir.path(), options).unwrap();
    let t = TenantId::new("stall").unwrap();
    for i in 0..2000u32 {
        db.put(
            &t,
            Table::new(2),
            &i.to_be_bytes(),
            &[7u8; 1024],
            Durability::Buffered,
        )
        .unwrap();
    }
    let s = db.stats();
    // Each flush fsyncs a file and the manifest (milliseconds); a writer filling the next
    // 8 KiB memtable meanwhile must wait for it.
    assert!(s.stall_memtable_count > 0, "{s:?}");
    assert!(s.stall_memtable_micros > 0, "{s:?}");
    assert!(s.immutable_memtables <= 1, "{s:?}");
    let n = db
        .scan(&t, Table::new(2), Bound::Unbounded, Bound::Unbounded, None)
        .unwrap()
        .count();
    assert_eq!(n, 2000);
}
