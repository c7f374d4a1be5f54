//! Engine crash-point test: a fixed workload with writes at both durabilities, flushes and
//! a compaction runs on a `FaultStorage` that halts after its Nth sync point (or write);
//! the unsynced data is then lost in each `CrashMode`, the engine reopens, and its contents
//! must equal the model after some prefix of the workload that includes every operation
//! acknowledged as durable (a `SyncData` write or a completed flush).
//!
//! Long run: `MEMFOREST_FAULT_SEEDS=50 cargo test --release -p memforest-engine --test
//! fault_crash -- --nocapture`.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::cast_possible_truncation,
    reason = "test code; sizes are small"
)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use memforest_engine::{Db, Durability, Error, Options, RecoveryMode, Table, TenantId};
use memforest_io::{CrashMode, FaultStorage, OpKind, Storage};
use memforest_wal::WalError;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Debug, Clone)]
enum Step {
    Put(u8, Vec<u8>, Durability),
    Delete(u8),
    Flush,
    Compact,
}

/// 90 steps over 24 keys: overwrites, deletes, every 4th write synced, three flushes and a
/// full compaction in the middle.
fn workload() -> Vec<Step> {
    let mut steps = Vec::new();
    for i in 0..90u32 {
        let k = (i * 7 % 24) as u8;
        steps.push(match i {
            25 | 50 | 80 => Step::Flush,
            60 => Step::Compact,
            _ if i % 11 == 5 => Step::Delete(k),
            _ => {
                let d = if i % 4 == 0 {
                    Durability::SyncData
                } else {
                    Durability::Buffered
                };
                Step::Put(
                    k,
                    format!("v{i}-{}", "x".repeat(i as usize % 30)).into_bytes(),
                    d,
                )
            }
        });
    }
    steps
}

/// Key `k` of `Table::Facts` as `Db::scan_tenant` returns it (table byte, then the key).
fn scan_key(k: u8) -> Vec<u8> {
    vec![Table::Facts as u8, k]
}

/// Models after 0, 1, ... n steps.
fn models(steps: &[Step]) -> Vec<Model> {
    let mut m = Model::new();
    let mut out = vec![m.clone()];
    for s in steps {
        match s {
            Step::Put(k, v, _) => {
                m.insert(scan_key(*k), v.clone());
            }
            Step::Delete(k) => {
                m.remove(&scan_key(*k));
            }
            Step::Flush | Step::Compact => {}
        }
        out.push(m.clone());
    }
    out
}

fn tenant() -> TenantId {
    TenantId::new("t").unwrap()
}

fn options(fs: &FaultStorage, mode: RecoveryMode) -> Options {
    Options {
        // No automatic flush or compaction: the workload decides, so crash points replay.
        memtable_size: 1 << 20,
        l0_compaction_trigger: 50,
        l0_stop_writes_trigger: 100,
        recovery_mode: mode,
        storage: Arc::new(fs.clone()),
        ..Options::default()
    }
}

/// How far the workload got: steps attempted, and the prefix known durable.
#[derive(Debug, Clone, Copy, Default)]
struct Outcome {
    attempted: usize,
    durable: usize,
}

fn run(fs: &FaultStorage, dir: &Path, steps: &[Step]) -> Outcome {
    let mut out = Outcome::default();
    let Ok(db) = Db::open(dir, options(fs, RecoveryMode::TolerateCorruptedTail)) else {
        return out;
    };
    let t = tenant();
    for (i, s) in steps.iter().enumerate() {
        out.attempted = i + 1;
        let ok = match s {
            Step::Put(k, v, d) => db.put(&t, Table::Facts, &[*k], v, *d).is_ok(),
            Step::Delete(k) => {
                let mut b = memforest_engine::WriteBatch::new();
                b.delete(&t, Table::Facts, &[*k]);
                db.write(&b, Durability::Buffered).is_ok()
            }
            Step::Flush => db.flush().is_ok(),
            Step::Compact => db.compact_all().is_ok(),
        };
        if !ok {
            break;
        }
        if matches!(s, Step::Put(_, _, Durability::SyncData) | Step::Flush) {
            out.durable = i + 1;
        }
    }
    out
}

fn dump(db: &Db) -> Model {
    db.scan_tenant(&tenant(), None)
        .unwrap()
        .map(|r| {
            let (k, v) = r.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

fn seeds() -> u64 {
    std::env::var("MEMFOREST_FAULT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// What a crash loop did.
#[derive(Debug, Default)]
struct Tally {
    crashes: usize,
    /// The WAL refused a sector-torn tail under `TolerateCorruptedTail`; `PointInTime`
    /// opened it.
    wal_fallbacks: usize,
    /// The manifest refused a sector-torn, never-synced last record; opened after cutting
    /// the manifest at the reported offset (the documented repair).
    manifest_repairs: usize,
}

/// Reopens after a crash. Only a `Sectors` crash (holes in unsynced data) may need help,
/// and only of two documented kinds (see `docs/reliability.md`): the WAL's default mode
/// refusing a torn tail (retry with `PointInTime`), or the manifest refusing a torn last
/// record (cut it off at the reported offset). Anything else fails the test.
fn reopen(
    fs: &FaultStorage,
    dir: &Path,
    crash_mode: CrashMode,
    tally: &mut Tally,
    what: &str,
) -> (Db, RecoveryMode) {
    let mut mode = RecoveryMode::TolerateCorruptedTail;
    let mut errors = Vec::new();
    for _ in 0..3 {
        let e = match Db::open(dir, options(fs, mode)) {
            Ok(db) => return (db, mode),
            Err(e) => e,
        };
        let sectors = crash_mode == CrashMode::Sectors;
        match &e {
            Error::Wal(WalError::Corruption { .. })
                if sectors && mode == RecoveryMode::TolerateCorruptedTail =>
            {
                tally.wal_fallbacks += 1;
                mode = RecoveryMode::PointInTime;
            }
            Error::Corrupt { path, offset, .. }
                if sectors && path.to_string_lossy().contains("MANIFEST-") =>
            {
                tally.manifest_repairs += 1;
                let f = fs.open_append(path).unwrap();
                f.set_len(*offset).unwrap();
                f.sync_data().unwrap();
            }
            _ => panic!("{what}: reopen failed: {e} (after {errors:?})"),
        }
        errors.push(e.to_string());
    }
    panic!("{what}: reopen failed: {errors:?}")
}

/// Crashes after every `n`th operation of `kinds` in every mode of `modes`.
fn crash_at_every(kinds: &[OpKind], modes: &[CrashMode]) -> Tally {
    let steps = workload();
    let models = models(&steps);
    let probe = FaultStorage::new(0);
    let probe_dir = tempfile::tempdir().unwrap();
    let full = run(&probe, probe_dir.path(), &steps);
    assert_eq!(full.attempted, steps.len(), "the workload runs to the end");
    assert!(full.durable >= 80, "{full:?}");
    let points = probe.total(kinds);
    assert!(points > 10, "{points} crash points");
    let mut tally = Tally::default();
    for n in 0..=points {
        for seed in 0..seeds() {
            for &mode in modes {
                let fs = FaultStorage::new((seed << 32) + (n << 2) + mode as u64);
                let dir = tempfile::tempdir().unwrap(); // real, for the lock file only
                fs.halt_after(kinds, n);
                let outcome = run(&fs, dir.path(), &steps);
                fs.crash(mode);
                let what =
                    format!("crash after {kinds:?} #{n}, seed {seed}, {mode:?}: {outcome:?}");
                let (db, used) = reopen(&fs, dir.path(), mode, &mut tally, &what);
                let got = dump(&db);
                let matched = (outcome.durable..=outcome.attempted).find(|&k| models[k] == got);
                assert!(
                    matched.is_some(),
                    "{what}: state is no prefix in {}..={} of the workload: {got:?}",
                    outcome.durable,
                    outcome.attempted
                );
                // The recovered engine takes writes that survive a clean reopen.
                db.put(
                    &tenant(),
                    Table::Facts,
                    b"after",
                    b"crash",
                    Durability::SyncData,
                )
                .unwrap();
                db.close().unwrap();
                let db = Db::open(dir.path(), options(&fs, used)).unwrap();
                assert_eq!(
                    db.get(&tenant(), Table::Facts, b"after")
                        .unwrap()
                        .as_deref(),
                    Some(&b"crash"[..]),
                    "{what}"
                );
                db.close().unwrap();
                tally.crashes += 1;
            }
        }
    }
    tally
}

#[test]
fn every_sync_point_crash_recovers_a_prefix_with_every_durable_write() {
    let tally = crash_at_every(&[OpKind::Sync, OpKind::SyncDir], &CrashMode::ALL);
    eprintln!("sync points: {tally:?}");
    assert!(tally.crashes > 30, "{tally:?}");
    assert_eq!(
        tally.wal_fallbacks + tally.manifest_repairs,
        0,
        "nothing unsynced at a sync point"
    );
}

#[test]
fn every_write_crash_recovers_a_prefix_with_every_durable_write() {
    let tally = crash_at_every(&[OpKind::Write], &CrashMode::ALL);
    eprintln!("writes: {tally:?}");
    assert!(tally.crashes > 30, "{tally:?}");
}
