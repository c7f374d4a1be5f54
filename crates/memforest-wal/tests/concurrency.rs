//! Group commit under contention: 8 threads append with `SyncData`; every acknowledged
//! seqno is recovered, seqnos are dense and increasing, and batches share syncs.
#![allow(
    clippy::cast_possible_truncation,
    reason = "offsets and sizes in test logs are small"
)]

mod common;

use std::sync::{Arc, Barrier};

use common::{batch, open};
use memforest_wal::{Durability, RecoveryMode};

#[test]
fn eight_sync_writers_share_fsyncs_and_lose_nothing() {
    const THREADS: u64 = 8;
    const PER_THREAD: u64 = 40;
    // On the target's disk rather than a tmpfs, so the syncs are real.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (wal, _) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    let wal = Arc::new(wal);
    let barrier = Arc::new(Barrier::new(usize::try_from(THREADS).unwrap()));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (wal, barrier) = (Arc::clone(&wal), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                (0..PER_THREAD)
                    .map(|i| {
                        // Entry counts 0..=2, so seqno spans differ (an empty batch owns one).
                        let b = batch(t * 1000 + i, (i % 3) as usize, 64);
                        (wal.append(&b, Durability::SyncData).unwrap(), b)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut acked: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    acked.sort_by_key(|(seqno, _)| *seqno);
    let stats = wal.stats();
    assert_eq!(stats.batches, THREADS * PER_THREAD);
    // With 8 writers contending, some group must have carried more than one batch.
    assert!(stats.syncs < stats.batches, "{stats:?}");
    assert_eq!(stats.syncs, stats.groups);
    drop(wal);

    let (wal, rec) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    let recovered: Vec<_> = rec
        .batches
        .iter()
        .map(|b| (b.first_seqno, b.batch.clone()))
        .collect();
    assert_eq!(recovered, acked);
    let mut next = 1;
    for b in &rec.batches {
        assert_eq!(b.first_seqno, next);
        next += b.batch.seqno_span();
    }
    assert_eq!(wal.last_seqno(), next - 1);
}

#[test]
fn buffered_writers_never_sync() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    let wal = Arc::new(wal);
    std::thread::scope(|s| {
        for t in 0..4 {
            let wal = &wal;
            s.spawn(move || {
                for i in 0..50 {
                    wal.append(&batch(t * 100 + i, 1, 10), Durability::Buffered)
                        .unwrap();
                }
            });
        }
    });
    let stats = wal.stats();
    assert_eq!((stats.batches, stats.syncs), (200, 0));
    wal.sync().unwrap();
    assert_eq!(wal.stats().syncs, 1);
}
