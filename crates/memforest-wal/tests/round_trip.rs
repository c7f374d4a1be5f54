//! Round trips through a real directory: batch shapes, value sizes, compression,
//! reopening and appending again, rotation and purging.
#![allow(
    clippy::cast_possible_truncation,
    reason = "offsets and sizes in test logs are small"
)]

mod common;

use common::{batch, contents, open, options, write_log};
use memforest_wal::{Compression, Durability, RecoveryMode, Wal, WalOptions, WriteBatch};

const SIZES: [usize; 7] = [0, 1, 65_535, 65_536, 65_537, 1 << 20, 16 << 20];

#[allow(clippy::unwrap_used, reason = "test helper")]
fn round_trip(batches: &[WriteBatch], opts: WalOptions) {
    let dir = tempfile::tempdir().unwrap();
    write_log(dir.path(), batches, opts);
    let (_wal, rec) = Wal::open(dir.path(), opts).unwrap();
    assert_eq!(contents(&rec), batches);
    assert_eq!(rec.report, Default::default());
    let mut seqno = 1;
    for b in &rec.batches {
        assert_eq!(b.first_seqno, seqno);
        seqno += b.batch.seqno_span();
    }
}

#[test]
fn empty_one_entry_and_many_blocks() {
    let mut big = WriteBatch::new();
    for i in 0..200u32 {
        big.push(1, i.to_le_bytes(), vec![i as u8; 1000]);
    }
    for threshold in [None, Some(0)] {
        let opts = WalOptions {
            compression: Compression {
                threshold,
                level: 1,
            },
            ..options(RecoveryMode::AbsoluteConsistency)
        };
        round_trip(
            &[
                WriteBatch::new(),
                batch(1, 1, 10),
                big.clone(),
                WriteBatch::new(),
            ],
            opts,
        );
    }
}

#[test]
fn value_sizes_plain_and_compressed() {
    for threshold in [None, Some(1024)] {
        let opts = WalOptions {
            compression: Compression {
                threshold,
                level: 1,
            },
            ..options(RecoveryMode::AbsoluteConsistency)
        };
        let batches: Vec<WriteBatch> = SIZES
            .iter()
            .map(|&n| {
                let mut b = WriteBatch::new();
                // Compressible but not constant.
                b.push(
                    0,
                    vec![7u8; 3],
                    (0..n).map(|j| (j / 97) as u8).collect::<Vec<_>>(),
                );
                b
            })
            .collect();
        round_trip(&batches, opts);
    }
}

#[test]
fn reopen_appends_after_the_recovered_end() {
    let dir = tempfile::tempdir().unwrap();
    let first: Vec<_> = (0..5).map(|i| batch(i, 3, 50)).collect();
    write_log(
        dir.path(),
        &first,
        options(RecoveryMode::AbsoluteConsistency),
    );
    let (wal, rec) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    assert_eq!(rec.batches.len(), 5);
    assert_eq!(wal.last_seqno(), 15);
    assert_eq!(
        wal.append(&batch(9, 2, 10), Durability::SyncData).unwrap(),
        16
    );
    drop(wal);
    let (wal, rec) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    assert_eq!(rec.batches.len(), 6);
    assert_eq!(rec.batches[5].first_seqno, 16);
    assert_eq!(wal.last_seqno(), 17);
}

#[test]
fn rotation_chains_segments_and_purge_deletes_covered_ones() {
    let dir = tempfile::tempdir().unwrap();
    let opts = WalOptions {
        segment_size: 4096,
        ..options(RecoveryMode::AbsoluteConsistency)
    };
    let (wal, _) = Wal::open(dir.path(), opts).unwrap();
    let mut firsts = Vec::new();
    for i in 0..40 {
        firsts.push(wal.append(&batch(i, 2, 300), Durability::Buffered).unwrap());
    }
    wal.rotate().unwrap();
    let ids = wal.segment_ids();
    assert!(ids.len() > 5, "{ids:?}");
    assert_eq!(wal.stats().segments_created as usize, ids.len());
    drop(wal);

    let (wal, rec) = Wal::open(dir.path(), opts).unwrap();
    assert_eq!(
        rec.batches
            .iter()
            .map(|b| b.first_seqno)
            .collect::<Vec<_>>(),
        firsts
    );
    assert_eq!(wal.segment_ids(), ids);

    // Batches up to seqno 20 are covered: only segments holding nothing newer go.
    let deleted = wal.purge_up_to(20).unwrap();
    assert!(deleted > 0);
    let left = wal.segment_ids();
    assert_eq!(left, ids[deleted..]);
    drop(wal);
    let (_, rec) = Wal::open(dir.path(), opts).unwrap();
    let first_left = rec.batches[0].first_seqno;
    assert!(
        first_left <= 21,
        "batch 21 must survive, log starts at {first_left}"
    );
    assert!(rec.batches.iter().all(|b| firsts.contains(&b.first_seqno)));
    assert_eq!(
        rec.batches.last().unwrap().first_seqno,
        *firsts.last().unwrap()
    );
}

#[test]
fn purge_never_deletes_the_active_segment() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    wal.append(&batch(0, 1, 1), Durability::SyncData).unwrap();
    assert_eq!(wal.purge_up_to(u64::MAX).unwrap(), 0);
    wal.rotate().unwrap();
    assert_eq!(wal.purge_up_to(u64::MAX).unwrap(), 1);
    assert_eq!(wal.segment_ids(), vec![2]);
    drop(wal);
    let (wal, rec) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    assert!(rec.batches.is_empty());
    // Seqnos continue after the purged batch, from the new segment's metadata.
    assert_eq!(
        wal.append(&batch(1, 1, 1), Durability::Buffered).unwrap(),
        2
    );
}

/// A kill between creating a new segment file and writing its metadata record leaves an
/// empty last segment: the default mode drops it and opens (`kill_loop.rs` found
/// this when the empty file was reported as a valid record and open refused).
#[test]
fn empty_last_segment_from_an_interrupted_rotation_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(RecoveryMode::TolerateCorruptedTail);
    let (wal, _) = Wal::open(dir.path(), opts).unwrap();
    let first = wal.append(&batch(0, 2, 300), Durability::SyncData).unwrap();
    let ids = wal.segment_ids();
    drop(wal);
    let next = ids.last().unwrap() + 1;
    let empty = dir.path().join(memforest_wal::segment::file_name(next));
    std::fs::File::create(&empty).unwrap();

    let (wal, rec) = Wal::open(dir.path(), opts).unwrap();
    assert_eq!(
        rec.batches
            .iter()
            .map(|b| b.first_seqno)
            .collect::<Vec<_>>(),
        vec![first]
    );
    assert!(!empty.exists(), "the empty segment is deleted");
    assert_eq!(wal.segment_ids(), ids);
    drop(wal);

    std::fs::File::create(&empty).unwrap();
    let strict = options(RecoveryMode::AbsoluteConsistency);
    assert!(Wal::open(dir.path(), strict).is_err());
}
