//! ENOSPC / EIO injected into the WAL's file operations: acknowledged batches stay
//! readable after reopen, a failed batch is not visible after reopen, a failed write or
//! sync poisons the log until it is reopened, reopening after space is freed recovers
//! everything acknowledged, and recovery itself needs no free space.
#![allow(clippy::unwrap_used, reason = "test code")]

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use memforest_io::{CrashMode, Errno, Fault, FaultStorage, OpKind, Storage};
use memforest_wal::{
    segment, Durability, Recovered, RecoveryMode, Wal, WalError, WalOptions, WriteBatch,
};

const DIR: &str = "/db/wal";

fn open_with(fs: &FaultStorage, options: WalOptions) -> Result<(Wal, Recovered), WalError> {
    let storage: Arc<dyn Storage> = Arc::new(fs.clone());
    Wal::open_with(storage, Path::new(DIR), options)
}

fn open(fs: &FaultStorage) -> Result<(Wal, Recovered), WalError> {
    open_with(fs, common::options(RecoveryMode::TolerateCorruptedTail))
}

fn batches(from: u64, n: u64, value_len: usize) -> Vec<WriteBatch> {
    (from..from + n)
        .map(|t| common::batch(t, 2, value_len))
        .collect()
}

/// Appends every batch durably; all must succeed.
fn append_all(wal: &Wal, bs: &[WriteBatch]) {
    for b in bs {
        wal.append(b, Durability::SyncData).unwrap();
    }
}

/// Reopens `fs` (faults cleared: space was freed) and asserts it holds exactly `expected`.
fn assert_log_holds(fs: &FaultStorage, expected: &[WriteBatch]) -> Wal {
    fs.clear_faults();
    let (wal, recovered) = open(fs).unwrap();
    assert_holds(&recovered, expected);
    wal
}

/// `recovered` holds exactly `expected` (compared without printing megabytes of values).
fn assert_holds(recovered: &Recovered, expected: &[WriteBatch]) {
    assert_eq!(recovered.batches.len(), expected.len(), "batch count");
    for (i, (got, want)) in recovered.batches.iter().zip(expected).enumerate() {
        assert!(got.batch == *want, "batch {i} differs");
    }
}

fn assert_poisoned(wal: &Wal) {
    let next = common::batch(500, 1, 1);
    for d in [Durability::Buffered, Durability::SyncData] {
        assert!(matches!(wal.append(&next, d), Err(WalError::Poisoned(_))));
    }
    assert!(matches!(wal.sync(), Err(WalError::Poisoned(_))));
    assert!(matches!(wal.rotate(), Err(WalError::Poisoned(_))));
}

/// Injects `fault`, appends one more batch of `value_len` bytes (which must fail), checks
/// the log is poisoned, then reopens after freeing space: exactly the acknowledged batches.
fn failed_append_is_invisible(fault: Fault, value_len: usize) {
    let fs = FaultStorage::new(1);
    let (wal, _) = open(&fs).unwrap();
    let acked = batches(0, 5, 300);
    append_all(&wal, &acked);
    fs.inject(fault);
    let failed = common::batch(100, 3, value_len);
    assert!(
        wal.append(&failed, Durability::SyncData).is_err(),
        "{fault:?}"
    );
    assert_poisoned(&wal);
    // Space is freed before the process lets go of the log: nothing buffered may leak.
    fs.clear_faults();
    drop(wal);
    let wal = assert_log_holds(&fs, &acked);
    let more = batches(200, 3, 50);
    append_all(&wal, &more);
    drop(wal);
    assert_log_holds(&fs, &[acked, more].concat());
    assert!(fs.injected() >= 1);
}

#[test]
fn enospc_on_a_small_append_keeps_acknowledged_and_hides_the_failed_batch() {
    failed_append_is_invisible(Fault::once(OpKind::Write, 1, Errno::NoSpace), 100);
}

#[test]
fn enospc_part_way_through_a_large_append_hides_the_partly_written_batch() {
    // 3 x 400 KB goes through the 256 KiB write buffer in several writes: fail the second.
    failed_append_is_invisible(Fault::once(OpKind::Write, 2, Errno::NoSpace), 400_000);
}

#[test]
fn eio_on_fsync_poisons_the_log_and_hides_the_unsynced_batch() {
    failed_append_is_invisible(Fault::once(OpKind::Sync, 1, Errno::Io), 100);
}

#[test]
fn enospc_creating_the_next_segment_keeps_acknowledged_batches() {
    for fault in [
        Fault::once(OpKind::Open, 1, Errno::NoSpace),
        Fault::once(OpKind::Write, 1, Errno::NoSpace),
        Fault::once(OpKind::SyncDir, 1, Errno::Io),
    ] {
        let fs = FaultStorage::new(2);
        let options = WalOptions {
            segment_size: 1,
            ..common::options(RecoveryMode::TolerateCorruptedTail)
        };
        let (wal, _) = open_with(&fs, options).unwrap();
        let acked = batches(0, 3, 100);
        append_all(&wal, &acked);
        // Every append now rotates first: the fault hits the new segment.
        fs.inject(fault);
        assert!(wal
            .append(&common::batch(9, 1, 1), Durability::SyncData)
            .is_err());
        assert_poisoned(&wal);
        drop(wal);
        assert_log_holds(&fs, &acked);
    }
}

#[test]
fn a_full_disk_stays_refused_until_reopen_after_space_is_freed() {
    let fs = FaultStorage::new(3);
    let (wal, _) = open(&fs).unwrap();
    let acked = batches(0, 4, 1000);
    append_all(&wal, &acked);
    fs.inject(Fault::from_nth(OpKind::Write, 1, Errno::NoSpace));
    for t in 10..15 {
        assert!(wal
            .append(&common::batch(t, 1, 10), Durability::Buffered)
            .is_err());
    }
    fs.clear_faults();
    assert_poisoned(&wal);
    drop(wal);
    let wal = assert_log_holds(&fs, &acked);
    append_all(&wal, &batches(20, 2, 10));
}

#[test]
fn recovery_of_a_torn_tail_needs_no_free_space() {
    let fs = FaultStorage::new(4);
    let (wal, _) = open(&fs).unwrap();
    let acked = batches(0, 6, 700);
    append_all(&wal, &acked);
    for b in batches(50, 4, 700) {
        wal.append(&b, Durability::Buffered).unwrap();
    }
    drop(wal);
    // Lose a random prefix of the unsynced tail: a torn last record.
    fs.crash(CrashMode::Prefix);
    fs.inject(Fault::from_nth(OpKind::Write, 1, Errno::NoSpace));
    let (_, recovered) = open(&fs).unwrap();
    assert!(recovered.batches.len() >= acked.len());
    for (i, (got, want)) in recovered.batches.iter().zip(&acked).enumerate() {
        assert!(got.batch == *want, "batch {i} differs");
    }
    assert_eq!(fs.injected(), 0, "recovery wrote nothing");
}

#[test]
fn recovery_from_a_torn_new_segment_needs_no_free_space() {
    let fs = FaultStorage::new(5);
    let (wal, _) = open(&fs).unwrap();
    let acked = batches(0, 3, 100);
    append_all(&wal, &acked);
    let active = *wal.segment_ids().last().unwrap();
    drop(wal);
    // A crash while the next segment was being created: its metadata record is torn.
    let dir = Path::new(DIR);
    let mut torn = fs.create_new(&segment::path(dir, active + 1)).unwrap();
    torn.write_all(&[0x5a; 9]).unwrap();
    torn.sync_data().unwrap();
    fs.sync_dir(dir).unwrap();
    fs.inject(Fault::from_nth(OpKind::Write, 1, Errno::NoSpace));
    let (wal, recovered) = open(&fs).unwrap();
    assert_holds(&recovered, &acked);
    assert_eq!(
        wal.segment_ids(),
        vec![active],
        "the torn segment is dropped"
    );
}
