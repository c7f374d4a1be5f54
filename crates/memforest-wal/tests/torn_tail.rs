//! Torn tails: a log cut at every byte of its last record recovers exactly the complete
//! prefix, truncates the torn bytes, and accepts new appends after them.
#![allow(
    clippy::cast_possible_truncation,
    reason = "offsets and sizes in test logs are small"
)]

mod common;

use common::{batch, batch_offsets, contents, copy_dir, open, seg, write_log};
use memforest_wal::{DamageReason, Durability, RecoveryMode, WalError};

#[test]
fn cut_at_every_byte_of_the_last_record() {
    let src = tempfile::tempdir().unwrap();
    let batches: Vec<_> = (0..4).map(|i| batch(i, 2, 20)).collect();
    write_log(
        src.path(),
        &batches,
        common::options(RecoveryMode::AbsoluteConsistency),
    );
    let full = std::fs::read(seg(src.path(), 1)).unwrap();
    let last_start = *batch_offsets(src.path(), 1).last().unwrap() as usize;

    for cut in last_start..full.len() {
        let dir = copy_dir(src.path());
        std::fs::write(seg(dir.path(), 1), &full[..cut]).unwrap();

        // Absolute consistency refuses every torn cut, naming the last record's offset.
        match open(dir.path(), RecoveryMode::AbsoluteConsistency) {
            Ok(_) => assert_eq!(cut, last_start, "cut {cut} accepted"),
            Err(WalError::Corruption {
                segment, offset, ..
            }) => {
                assert_ne!(cut, last_start);
                assert_eq!((segment, offset), (1, last_start as u64), "cut {cut}");
            }
            Err(e) => panic!("cut {cut}: {e}"),
        }

        let (wal, rec) = open(dir.path(), RecoveryMode::TolerateCorruptedTail).unwrap();
        assert_eq!(contents(&rec), batches[..3], "cut {cut}");
        let tail = rec.report.tolerated_tail.clone();
        assert_eq!(tail.is_some(), cut != last_start, "cut {cut}");
        // The torn bytes are gone before anything new is written.
        assert_eq!(
            std::fs::metadata(seg(dir.path(), 1)).unwrap().len(),
            last_start as u64
        );
        let seqno = wal.append(&batch(99, 1, 5), Durability::SyncData).unwrap();
        assert_eq!(seqno, 7);
        drop(wal);
        let (_, rec) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
        assert_eq!(rec.batches.len(), 4, "cut {cut}");
        assert_eq!(rec.batches[3].batch, batch(99, 1, 5));
    }
}

#[test]
fn cut_inside_a_record_spanning_blocks() {
    let src = tempfile::tempdir().unwrap();
    // The last batch spans three blocks: First, Middle, Last.
    let batches = vec![batch(0, 1, 100), batch(1, 1, 70_000)];
    write_log(
        src.path(),
        &batches,
        common::options(RecoveryMode::AbsoluteConsistency),
    );
    let full = std::fs::read(seg(src.path(), 1)).unwrap();
    let last_start = batch_offsets(src.path(), 1)[1] as usize;
    let cuts = (last_start..full.len())
        .step_by(997)
        .chain([32_768, 65_536, 65_536 + 14]);
    for cut in cuts {
        let dir = copy_dir(src.path());
        std::fs::write(seg(dir.path(), 1), &full[..cut]).unwrap();
        let (_, rec) = open(dir.path(), RecoveryMode::PointInTime).unwrap();
        assert_eq!(contents(&rec), batches[..1], "cut {cut}");
        let (_, rec) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
        assert_eq!(contents(&rec), batches[..1], "cut {cut} after truncation");
    }
}

#[test]
fn first_written_last_missing_is_a_torn_tail() {
    let src = tempfile::tempdir().unwrap();
    let batches = vec![batch(0, 1, 100), batch(1, 1, 40_000)];
    write_log(
        src.path(),
        &batches,
        common::options(RecoveryMode::AbsoluteConsistency),
    );
    let last_start = batch_offsets(src.path(), 1)[1];
    // Keep the First fragment (the rest of block 0), lose the Last.
    std::fs::OpenOptions::new()
        .write(true)
        .open(seg(src.path(), 1))
        .unwrap()
        .set_len(32_768)
        .unwrap();
    let dir = copy_dir(src.path());
    match open(dir.path(), RecoveryMode::AbsoluteConsistency) {
        Err(WalError::Corruption {
            offset,
            reason: DamageReason::UnfinishedRecord,
            ..
        }) => assert_eq!(offset, last_start),
        other => panic!("{other:?}"),
    }
    let (_, rec) = open(dir.path(), RecoveryMode::TolerateCorruptedTail).unwrap();
    assert_eq!(contents(&rec), batches[..1]);
    let tail = rec.report.tolerated_tail.unwrap();
    assert_eq!(
        (tail.offset, tail.reason),
        (last_start, DamageReason::UnfinishedRecord)
    );
}
