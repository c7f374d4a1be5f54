//! In-process crash test: a fixed workload runs on a `FaultStorage` that halts after its
//! Nth sync point (or Nth write), every unsynced byte is then lost in each `CrashMode`, and
//! recovery is checked against an oracle: every acknowledged durable batch is present,
//! whole, in order, with no holes, and nothing that was never appended appears.
//!
//! Each crash point runs with one seed (what the crash keeps is drawn from it); a long run
//! draws more: `MEMFOREST_FAULT_SEEDS=200 cargo test --release -p memforest-wal --test
//! fault_crash -- --nocapture` (see `docs/reliability.md`).
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::cast_possible_truncation,
    reason = "test code; workload sizes are small"
)]

mod common;

use std::path::Path;
use std::sync::Arc;

use memforest_io::{CrashMode, FaultStorage, OpKind, Storage};
use memforest_wal::{Durability, Recovered, RecoveryMode, Wal, WalError, WalOptions, WriteBatch};

const DIR: &str = "/db/wal";
const SYNC_POINTS: [OpKind; 2] = [OpKind::Sync, OpKind::SyncDir];

/// One step of the workload.
struct Step {
    batch: WriteBatch,
    durability: Durability,
    /// `Wal::sync` after the append.
    sync_after: bool,
    /// `Wal::rotate` after the append.
    rotate_after: bool,
}

/// 30 batches: small ones, ones spanning 32 KiB blocks, empty ones; buffered, fdatasync
/// and fsync appends; explicit syncs; rotations both explicit and by size.
fn workload() -> Vec<Step> {
    (0..30u64)
        .map(|j| {
            let (entries, value_len) = match j % 5 {
                0 => (1, 40_000),
                1 => (0, 0),
                _ => (j as usize % 4 + 1, 100 * (j as usize % 7 + 1)),
            };
            Step {
                batch: common::batch(j, entries, value_len),
                durability: match j % 4 {
                    0 => Durability::SyncData,
                    3 if j % 8 == 3 => Durability::SyncAll,
                    _ => Durability::Buffered,
                },
                sync_after: j % 10 == 9,
                rotate_after: j == 12,
            }
        })
        .collect()
}

fn options(mode: RecoveryMode) -> WalOptions {
    WalOptions {
        segment_size: 48 << 10,
        ..common::options(mode)
    }
}

fn open(fs: &FaultStorage, mode: RecoveryMode) -> Result<(Wal, Recovered), WalError> {
    let storage: Arc<dyn Storage> = Arc::new(fs.clone());
    Wal::open_with(storage, Path::new(DIR), options(mode))
}

/// How far the workload got before the storage halted.
#[derive(Debug, Clone, Copy)]
struct Outcome {
    /// Appends issued (the last may have failed).
    attempted: usize,
    /// Length of the prefix of batches known durable (a sync covering them succeeded).
    durable: usize,
}

fn run(fs: &FaultStorage, steps: &[Step]) -> Outcome {
    let mut out = Outcome {
        attempted: 0,
        durable: 0,
    };
    let Ok((wal, recovered)) = open(fs, RecoveryMode::TolerateCorruptedTail) else {
        return out;
    };
    assert!(recovered.batches.is_empty());
    for (j, step) in steps.iter().enumerate() {
        out.attempted = j + 1;
        if wal.append(&step.batch, step.durability).is_err() {
            return out;
        }
        if step.durability > Durability::Buffered {
            out.durable = j + 1;
        }
        // An explicit sync and a rotation both make every acknowledged batch durable.
        if step.sync_after {
            if wal.sync().is_err() {
                return out;
            }
            out.durable = j + 1;
        }
        if step.rotate_after {
            if wal.rotate().is_err() {
                return out;
            }
            out.durable = j + 1;
        }
    }
    out
}

/// The oracle: recovered batches are exactly a prefix of the workload, at least as long
/// as the durable prefix and no longer than what was attempted, with dense seqnos.
fn check(recovered: &Recovered, steps: &[Step], outcome: Outcome, what: &str) {
    let got = &recovered.batches;
    assert!(
        got.len() >= outcome.durable,
        "{what}: lost acknowledged durable batches: recovered {} of {} ({outcome:?})",
        got.len(),
        outcome.durable
    );
    assert!(got.len() <= outcome.attempted, "{what}: invented batches");
    let mut seqno = 1;
    for (i, (b, step)) in got.iter().zip(steps).enumerate() {
        assert_eq!(b.batch, step.batch, "{what}: batch {i} differs");
        assert_eq!(b.first_seqno, seqno, "{what}: batch {i} seqno");
        seqno += step.batch.seqno_span();
    }
}

/// After recovery the log must take appends and keep them across another reopen.
fn check_usable(fs: &FaultStorage, wal: Wal, recovered: usize, mode: RecoveryMode, what: &str) {
    let extra = common::batch(999, 2, 10);
    wal.append(&extra, Durability::SyncData).unwrap();
    drop(wal);
    let (_, again) = open(fs, mode).unwrap();
    assert_eq!(
        again.batches.len(),
        recovered + 1,
        "{what}: append after recovery"
    );
    assert_eq!(
        again.batches.last().map(|b| &b.batch),
        Some(&extra),
        "{what}"
    );
}

/// What a crash loop did.
#[derive(Debug, Default)]
struct Tally {
    crashes: usize,
    /// `TolerateCorruptedTail` refused a sector-torn image that `PointInTime` recovered.
    refused: usize,
}

/// Seeds per crash point: `MEMFOREST_FAULT_SEEDS`, default 1.
fn seeds() -> u64 {
    std::env::var("MEMFOREST_FAULT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Crashes after the `n`th operation of any of `kinds`, for every `n` the workload reaches,
/// every seed and every crash mode, and recovers in `mode`.
///
/// A `Sectors` crash can leave a hole in the unsynced tail followed by an intact record
/// (out-of-order writeback). `TolerateCorruptedTail` refuses that by contract (it cannot
/// tell it from corruption in the middle of the log); the loop then checks that the refusal
/// names a `Corruption` and that `PointInTime` recovers the image with the same oracle.
fn crash_at_every(kinds: &[OpKind], mode: RecoveryMode) -> Tally {
    let steps = workload();
    let probe = FaultStorage::new(0);
    let full = run(&probe, &steps);
    assert_eq!(full.durable, steps.len(), "the workload ends durable");
    let points = probe.total(kinds);
    assert!(points > 10, "workload has {points} crash points");
    let mut tally = Tally::default();
    for n in 0..=points {
        for seed in 0..seeds() {
            for crash_mode in CrashMode::ALL {
                let fs = FaultStorage::new((seed << 32) + (n << 2) + crash_mode as u64);
                fs.halt_after(kinds, n);
                let outcome = run(&fs, &steps);
                fs.crash(crash_mode);
                let what = format!("crash after {kinds:?} #{n}, seed {seed}, {crash_mode:?}");
                let refused = recover(&fs, crash_mode, mode, &steps, outcome, &what);
                tally.crashes += 1;
                tally.refused += usize::from(refused);
            }
        }
    }
    tally
}

/// Recovers a crashed image in `mode` and checks it; returns whether
/// `TolerateCorruptedTail` refused a sector-torn image (then recovered with `PointInTime`).
fn recover(
    fs: &FaultStorage,
    crash_mode: CrashMode,
    mode: RecoveryMode,
    steps: &[Step],
    outcome: Outcome,
    what: &str,
) -> bool {
    let (wal, recovered, used, refused) = match open(fs, mode) {
        Ok((wal, recovered)) => (wal, recovered, mode, false),
        Err(WalError::Corruption { .. })
            if crash_mode == CrashMode::Sectors && mode == RecoveryMode::TolerateCorruptedTail =>
        {
            let pit = RecoveryMode::PointInTime;
            let (wal, recovered) = open(fs, pit).unwrap();
            (wal, recovered, pit, true)
        }
        Err(e) => panic!("{what}, {mode:?}: reopen failed: {e}"),
    };
    check(&recovered, steps, outcome, what);
    check_usable(fs, wal, recovered.batches.len(), used, what);
    refused
}

#[test]
fn every_sync_point_crash_keeps_every_acknowledged_batch() {
    for mode in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::PointInTime,
    ] {
        let tally = crash_at_every(&SYNC_POINTS, mode);
        assert!(tally.crashes > 30, "{tally:?}");
        eprintln!("sync points, {mode:?}: {tally:?}");
        // At a sync point nothing is unsynced, so no crash mode can tear anything.
        assert_eq!(tally.refused, 0, "{mode:?}");
    }
}

#[test]
fn every_write_crash_keeps_every_acknowledged_batch_point_in_time() {
    let tally = crash_at_every(&[OpKind::Write], RecoveryMode::PointInTime);
    assert!(tally.crashes > 30, "{tally:?}");
    assert_eq!(tally.refused, 0, "PointInTime never refuses: {tally:?}");
    eprintln!("writes, PointInTime: {tally:?}");
}

#[test]
fn every_write_crash_keeps_every_acknowledged_batch_tolerate_tail() {
    let tally = crash_at_every(&[OpKind::Write], RecoveryMode::TolerateCorruptedTail);
    assert!(tally.crashes > 30, "{tally:?}");
    // Only sector-torn images may be refused, and the loop proved PointInTime recovers them.
    assert!(tally.refused < tally.crashes / 3, "{tally:?}");
    eprintln!("writes, TolerateCorruptedTail: {tally:?}");
}
