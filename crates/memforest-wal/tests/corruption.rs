//! Damage inside the log: one flipped byte in batch k of n under every recovery mode, zeroed
//! regions, garbage after a fragmented record, and missing or truncated earlier segments.
#![allow(
    clippy::cast_possible_truncation,
    reason = "offsets and sizes in test logs are small"
)]

mod common;

use common::{batch, batch_offsets, contents, copy_dir, edit_segment, open, seg, write_log};
use memforest_wal::{DamageReason, RecoveryMode, SegmentDamage, WalError, WalOptions, WriteBatch};

#[allow(clippy::panic, reason = "test helper")]
fn corruption(res: Result<impl std::fmt::Debug, WalError>) -> (u64, u64, DamageReason) {
    match res {
        Err(WalError::Corruption {
            segment,
            offset,
            reason,
        }) => (segment, offset, reason),
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn flipped_byte_in_batch_k_of_n_under_every_mode() {
    const N: usize = 6;
    let src = tempfile::tempdir().unwrap();
    let batches: Vec<WriteBatch> = (0..N as u64).map(|i| batch(i, 1, 40)).collect();
    write_log(
        src.path(),
        &batches,
        common::options(RecoveryMode::AbsoluteConsistency),
    );
    let offsets = batch_offsets(src.path(), 1);
    for k in 0..N {
        let at = offsets[k];
        let flip = |d: &std::path::Path| edit_segment(d, 1, |b| b[at as usize + 30] ^= 0x10);
        let bad = (1, at, DamageReason::ChecksumMismatch);

        let dir = copy_dir(src.path());
        flip(dir.path());
        assert_eq!(
            corruption(open(dir.path(), RecoveryMode::AbsoluteConsistency)),
            bad
        );

        let tolerate = open(dir.path(), RecoveryMode::TolerateCorruptedTail);
        if k + 1 < N {
            assert_eq!(corruption(tolerate), bad, "k {k}");
        } else {
            let (_, rec) = tolerate.unwrap();
            assert_eq!(contents(&rec), batches[..k]);
        }

        let dir = copy_dir(src.path());
        flip(dir.path());
        let (_, rec) = open(dir.path(), RecoveryMode::PointInTime).unwrap();
        assert_eq!(contents(&rec), batches[..k], "k {k}");
        let stop = rec.report.stopped_at.unwrap();
        assert_eq!((stop.segment, stop.offset, stop.reason), bad);
        // The prefix is now the whole log.
        let (_, rec) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
        assert_eq!(contents(&rec), batches[..k]);

        let dir = copy_dir(src.path());
        flip(dir.path());
        let (_, rec) = open(dir.path(), RecoveryMode::SkipAnyCorrupted).unwrap();
        let mut want = batches.clone();
        want.remove(k);
        assert_eq!(contents(&rec), want, "k {k}");
        let damage = SegmentDamage {
            segment: 1,
            offset: at,
            reason: DamageReason::ChecksumMismatch,
        };
        if k + 1 < N {
            let gap = SegmentDamage {
                segment: 1,
                offset: offsets[k + 1],
                reason: DamageReason::SeqnoGap {
                    expected: k as u64 + 1,
                    found: k as u64 + 2,
                },
            };
            assert_eq!(rec.report.skipped, [damage, gap]);
        } else {
            // The last record, with no synced length known: a torn append, cut as the
            // default mode cuts it.
            assert_eq!(rec.report.skipped, []);
            assert_eq!(rec.report.tolerated_tail, Some(damage));
        }
    }
}

#[test]
fn zeroed_tail_is_a_clean_end_but_zeros_then_data_are_corruption() {
    let src = tempfile::tempdir().unwrap();
    let batches: Vec<_> = (0..3).map(|i| batch(i, 2, 30)).collect();
    write_log(
        src.path(),
        &batches,
        common::options(RecoveryMode::AbsoluteConsistency),
    );
    let len = std::fs::metadata(seg(src.path(), 1)).unwrap().len();

    // A preallocated-looking zero tail, even across block boundaries: clean in every mode.
    for mode in RecoveryMode::ALL {
        let dir = copy_dir(src.path());
        edit_segment(dir.path(), 1, |b| b.resize(100_000, 0));
        let (_, rec) = open(dir.path(), mode).unwrap();
        assert_eq!(contents(&rec), batches, "{mode:?}");
        assert_eq!(rec.report.tolerated_tail, None);
        assert_eq!(rec.report.truncated, Some((1, 100_000, len)));
    }

    // Zeros then a non-zero byte: corruption, reported where the zeros start.
    let dir = copy_dir(src.path());
    edit_segment(dir.path(), 1, |b| {
        b.resize(50_000, 0);
        b.push(1);
    });
    assert_eq!(
        corruption(open(dir.path(), RecoveryMode::AbsoluteConsistency)),
        (1, len, DamageReason::ZerosThenData)
    );
    // Nothing valid follows, so the default mode cuts it off as a damaged tail.
    let (_, rec) = open(dir.path(), RecoveryMode::TolerateCorruptedTail).unwrap();
    assert_eq!(contents(&rec), batches);
    assert_eq!(
        rec.report.tolerated_tail.unwrap().reason,
        DamageReason::ZerosThenData
    );
}

/// The last whole records of a segment zeroed up to a synced length the ledger recorded
/// (a lost or zero-filled block after a clean close): not a clean end, since those bytes
/// were synced. The strict modes refuse at the first missing record; the salvage modes
/// recover the records before it and report where the loss starts.
#[test]
fn zeroed_records_before_the_synced_length_are_damage() {
    let src = tempfile::tempdir().unwrap();
    let batches: Vec<_> = (0..4).map(|i| batch(i, 2, 30)).collect();
    write_log(
        src.path(),
        &batches,
        common::options(RecoveryMode::AbsoluteConsistency),
    );
    let mut bytes = std::fs::read(seg(src.path(), 1)).unwrap();
    let synced = bytes.len() as u64;
    let at = batch_offsets(src.path(), 1)[2];
    bytes[at as usize..].fill(0);
    let image = memforest_wal::recovery::SegmentImage {
        id: 1,
        bytes: &bytes,
    };
    let plan =
        |mode| memforest_wal::recovery::plan(&[image], mode, &|_| Some(synced), &|_, _| false);
    for mode in [
        RecoveryMode::AbsoluteConsistency,
        RecoveryMode::TolerateCorruptedTail,
    ] {
        let (segment, offset, reason) = corruption(plan(mode));
        assert_eq!((segment, offset), (1, at), "{mode:?}");
        assert!(reason.to_string().contains("synced"), "{mode:?}: {reason}");
    }
    let stop = plan(RecoveryMode::PointInTime).unwrap();
    assert_eq!(stop.batches.len(), 2);
    let stopped = stop.report.stopped_at.unwrap();
    assert_eq!((stopped.segment, stopped.offset), (1, at));
    let skip = plan(RecoveryMode::SkipAnyCorrupted).unwrap();
    assert_eq!(skip.batches.len(), 2);
    let skipped: Vec<_> = skip.report.skipped.iter().map(|d| d.offset).collect();
    assert_eq!(skipped, [at]);
    // Without a recorded length the zeros are a clean end, as after a crash.
    let unknown = memforest_wal::recovery::plan(
        &[image],
        RecoveryMode::AbsoluteConsistency,
        &|_| None,
        &|_, _| false,
    )
    .unwrap();
    assert_eq!(unknown.batches.len(), 2);
}

#[test]
fn zeroed_region_followed_by_valid_records_refuses_the_default_mode() {
    let src = tempfile::tempdir().unwrap();
    let batches: Vec<_> = (0..120).map(|i| batch(i, 1, 1000)).collect();
    write_log(
        src.path(),
        &batches,
        common::options(RecoveryMode::AbsoluteConsistency),
    );
    let offsets = batch_offsets(src.path(), 1);
    let at = offsets[10];
    edit_segment(src.path(), 1, |b| b[at as usize..32_768].fill(0));
    let bad = (1, at, DamageReason::ZerosThenData);
    assert_eq!(
        corruption(open(src.path(), RecoveryMode::TolerateCorruptedTail)),
        bad
    );
    let (_, rec) = open(src.path(), RecoveryMode::PointInTime).unwrap();
    assert_eq!(contents(&rec), batches[..10]);
}

#[test]
fn garbage_after_first_and_middle_fragments() {
    // The record spans First (block 0), Middle (block 1) and Last (block 2).
    for followed in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut batches = vec![batch(0, 1, 100), batch(1, 1, 70_000)];
        if followed {
            batches.push(batch(2, 1, 100));
        }
        write_log(
            dir.path(),
            &batches,
            common::options(RecoveryMode::AbsoluteConsistency),
        );
        let start = batch_offsets(dir.path(), 1)[1];
        edit_segment(dir.path(), 1, |b| {
            for (i, byte) in b[65_536..65_536 + 2000].iter_mut().enumerate() {
                *byte = (i * 131 + 7) as u8;
            }
        });
        let tolerate = open(dir.path(), RecoveryMode::TolerateCorruptedTail);
        if followed {
            let (segment, offset, _) = corruption(tolerate);
            assert_eq!(segment, 1);
            assert!(offset >= start, "{offset}");
        } else {
            let (_, rec) = tolerate.unwrap();
            assert_eq!(contents(&rec), batches[..1]);
        }
        let (_, rec) = open(dir.path(), RecoveryMode::PointInTime).unwrap();
        assert_eq!(contents(&rec), batches[..1], "followed {followed}");
    }
}

#[allow(clippy::unwrap_used, reason = "test helper")]
fn rotated_log() -> (tempfile::TempDir, Vec<WriteBatch>, WalOptions) {
    let dir = tempfile::tempdir().unwrap();
    let opts = WalOptions {
        segment_size: 2000,
        ..common::options(RecoveryMode::AbsoluteConsistency)
    };
    let batches: Vec<_> = (0..24).map(|i| batch(i, 1, 300)).collect();
    write_log(dir.path(), &batches, opts);
    assert!(seg(dir.path(), 4).exists());
    (dir, batches, opts)
}

#[test]
fn missing_earlier_segment_is_detected_by_the_metadata_chain() {
    let (src, batches, _) = rotated_log();
    let n1 = batch_offsets(src.path(), 1).len();
    let n2 = batch_offsets(src.path(), 2).len();
    std::fs::remove_file(seg(src.path(), 2)).unwrap();
    let (segment, offset, reason) =
        corruption(open(src.path(), RecoveryMode::TolerateCorruptedTail));
    assert_eq!((segment, offset), (3, 0));
    assert!(matches!(
        reason,
        DamageReason::PredecessorMismatch {
            named_id: 2,
            actual_id: 1,
            ..
        }
    ));
    assert_eq!(
        corruption(open(src.path(), RecoveryMode::AbsoluteConsistency)),
        (3, 0, reason)
    );

    let dir = copy_dir(src.path());
    let (wal, rec) = open(dir.path(), RecoveryMode::PointInTime).unwrap();
    assert_eq!(contents(&rec), batches[..n1]);
    assert_eq!(rec.report.deleted_segments.first(), Some(&3));
    assert_eq!(wal.segment_ids(), vec![1]);

    // Salvage keeps everything that is still there, across the gap.
    let dir = copy_dir(src.path());
    let (_, rec) = open(dir.path(), RecoveryMode::SkipAnyCorrupted).unwrap();
    let mut want = batches[..n1].to_vec();
    want.extend_from_slice(&batches[n1 + n2..]);
    assert_eq!(contents(&rec), want);
}

/// A ledger that records only the loss of segments `lost.0..=lost.1`.
#[derive(Debug)]
struct LostLedger(u64, u64);

impl memforest_wal::SegmentLedger for LostLedger {
    fn created(&self, _: u64, _: Option<(u64, u64)>) -> std::io::Result<()> {
        Ok(())
    }
    fn deleting(&self, _: &[u64]) -> std::io::Result<()> {
        Ok(())
    }
    fn closed(&self, _: u64, _: u64) -> std::io::Result<()> {
        Ok(())
    }
    fn truncated(&self, _: u64, _: u64) -> std::io::Result<()> {
        Ok(())
    }
    fn synced_len(&self, _: u64) -> Option<u64> {
        None
    }
    fn lost(&self, first: u64, last: u64) -> bool {
        self.0 <= first && last <= self.1
    }
}

#[test]
fn a_missing_segment_whose_loss_the_ledger_recorded_starts_a_new_chain() {
    let (src, batches, opts) = rotated_log();
    let n1 = batch_offsets(src.path(), 1).len();
    let n2 = batch_offsets(src.path(), 2).len();
    std::fs::remove_file(seg(src.path(), 2)).unwrap();
    let open_tracked = |dir: &std::path::Path, mode, lost: LostLedger| {
        let opts = WalOptions {
            recovery_mode: mode,
            ..opts
        };
        let storage = memforest_io::default_storage();
        memforest_wal::Wal::open_tracked(storage, dir, opts, std::sync::Arc::new(lost))
    };
    // A loss the ledger does not record (another segment's) is still refused.
    let dir = copy_dir(src.path());
    let (segment, _, reason) = corruption(open_tracked(
        dir.path(),
        RecoveryMode::TolerateCorruptedTail,
        LostLedger(5, 5),
    ));
    assert_eq!(segment, 3);
    assert!(matches!(reason, DamageReason::PredecessorMismatch { .. }));
    for mode in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::AbsoluteConsistency,
    ] {
        let dir = copy_dir(src.path());
        let (wal, rec) = open_tracked(dir.path(), mode, LostLedger(2, 2)).unwrap();
        let mut want = batches[..n1].to_vec();
        want.extend_from_slice(&batches[n1 + n2..]);
        assert_eq!(contents(&rec), want, "{mode:?}");
        let first = u64::try_from(n1).unwrap() + 1;
        let last = u64::try_from(n1 + n2).unwrap();
        assert_eq!(
            rec.report.gaps,
            [memforest_wal::SegmentGap {
                first: 2,
                last: 2,
                seqnos: (first, last),
            }]
        );
        assert_eq!(wal.last_seqno(), u64::try_from(batches.len()).unwrap());
    }
}

#[test]
fn truncated_earlier_segment_is_detected_by_the_metadata_chain() {
    let (dir, _, _) = rotated_log();
    // Drop segment 2's last batch cleanly, at a record boundary.
    let last = *batch_offsets(dir.path(), 2).last().unwrap() as usize;
    edit_segment(dir.path(), 2, |b| b.truncate(last));
    let (segment, offset, reason) =
        corruption(open(dir.path(), RecoveryMode::TolerateCorruptedTail));
    assert_eq!((segment, offset), (3, 0));
    assert!(matches!(
        reason,
        DamageReason::PredecessorMismatch {
            named_id: 2,
            actual_id: 2,
            ..
        }
    ));

    // A torn cut in a non-last segment is never a tolerable tail.
    edit_segment(dir.path(), 2, |b| b.truncate(last - 5));
    let (segment, _, _) = corruption(open(dir.path(), RecoveryMode::TolerateCorruptedTail));
    assert_eq!(segment, 2);
}
