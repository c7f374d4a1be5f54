//! `engine_model`: bytes become a sequence of engine operations (puts at both durabilities,
//! deletes, tenant drops, flushes, compactions, clean reopens, crash reopens) with
//! fault-injection countdowns (the Nth next write / sync / rename / directory sync / open
//! fails with ENOSPC or EIO), run on a `FaultStorage`, and checked against a `BTreeMap`
//! model after every reopen:
//!
//! - an operation may fail only while a fault is armed; the engine is then dropped, the
//!   disk "freed" and reopened, and it must hold exactly the acknowledged writes (a failed
//!   write is not visible, nothing acknowledged is lost);
//! - after a clean reopen it holds exactly the acknowledged writes;
//! - after a crash (unsynced data dropped or cut to a random prefix) it holds the model of
//!   some prefix of the acknowledged writes that includes every durable one (a `SyncData`
//!   write or a completed flush), and the model continues from that prefix.
//!
//! Sector-torn crashes are left to `crates/memforest-engine/tests/fault_crash.rs`, which
//! knows the two documented refusals they can cause.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a failed expectation is a finding: the fuzzer and the corpus test report it"
)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use memforest_engine::{Db, Durability, Options, Table, TenantId, WriteBatch};
use memforest_io::{CrashMode, Errno, Fault, FaultStorage, OpKind};

/// The engine's contents: user key -> value (one tenant, one table).
type Model = BTreeMap<u8, Vec<u8>>;

/// Most operations taken from one input (keeps each run to milliseconds).
const MAX_OPS: usize = 48;

/// One operation decoded from the input.
#[derive(Debug, Clone, Copy)]
enum Op {
    Put(u8, Durability),
    Delete(u8),
    DropTenant,
    Flush,
    Compact,
    Reopen,
    Crash(CrashMode),
    Arm(Fault),
}

fn decode(data: &[u8]) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut bytes = data.iter().copied();
    while let Some(b) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        let op = match b % 16 {
            0..=4 => Op::Put(arg % 16, Durability::Buffered),
            5..=6 => Op::Put(arg % 16, Durability::SyncData),
            7..=8 => Op::Delete(arg % 16),
            9 => Op::DropTenant,
            10 => Op::Flush,
            11 => Op::Compact,
            12 => Op::Reopen,
            13 => Op::Crash(if arg % 2 == 0 {
                CrashMode::DropAll
            } else {
                CrashMode::Prefix
            }),
            _ => {
                let kind = [
                    OpKind::Write,
                    OpKind::Sync,
                    OpKind::Rename,
                    OpKind::SyncDir,
                    OpKind::Open,
                ][usize::from(arg % 5)];
                let errno = if arg & 0x80 == 0 {
                    Errno::NoSpace
                } else {
                    Errno::Io
                };
                let nth = u64::from((arg >> 3) % 8) + 1;
                Op::Arm(if arg & 0x40 == 0 {
                    Fault::once(kind, nth, errno)
                } else {
                    Fault::from_nth(kind, nth, errno)
                })
            }
        };
        ops.push(op);
        if ops.len() == MAX_OPS {
            break;
        }
    }
    ops
}

fn tenant() -> TenantId {
    TenantId::new("fuzz").expect("a valid tenant name")
}

fn options(fs: &FaultStorage) -> Options {
    Options {
        memtable_size: 64 << 10,
        l0_compaction_trigger: 2,
        l0_stop_writes_trigger: 64,
        storage: Arc::new(fs.clone()),
        ..Options::default()
    }
}

fn dump(db: &Db) -> Model {
    db.scan_tenant(&tenant(), None)
        .expect("scan after a successful open")
        .map(|r| {
            let (k, v) = r.expect("read after a successful open");
            assert_eq!(k.len(), 2, "one table byte and a one-byte key: {k:?}");
            (k[1], v.to_vec())
        })
        .collect()
}

/// The model and where durability stands.
#[derive(Debug, Default)]
struct History {
    /// Model after 0, 1, ... acknowledged state changes.
    states: Vec<Model>,
    /// Index into `states` of the last state known durable.
    durable: usize,
}

impl History {
    fn current(&self) -> &Model {
        self.states
            .last()
            .expect("history starts with the empty model")
    }

    fn push(&mut self, f: impl FnOnce(&mut Model)) {
        let mut next = self.current().clone();
        f(&mut next);
        self.states.push(next);
    }

    fn mark_durable(&mut self) {
        self.durable = self.states.len() - 1;
    }
}

fn open(fs: &FaultStorage, dir: &Path) -> Db {
    Db::open(dir, options(fs)).unwrap_or_else(|e| panic!("open with no fault armed: {e}"))
}

/// Drops the engine, frees the disk (no crash: the page cache survives) and reopens:
/// exactly the acknowledged state.
fn recover(db: Option<Db>, fs: &FaultStorage, dir: &Path, h: &History, why: &str) -> Db {
    drop(db);
    fs.clear_faults();
    let db = open(fs, dir);
    assert!(
        &dump(&db) == h.current(),
        "{why}: reopen differs from the acknowledged state"
    );
    db
}

/// What one run exercised (the corpus test checks the seeds reach every part).
#[derive(Debug, Default, Clone, Copy)]
pub struct Summary {
    /// Operations that failed because of an injected fault.
    pub faults_injected: u64,
    /// Reopens after a failed operation.
    pub recoveries: usize,
    /// Simulated crashes.
    pub crashes: usize,
}

/// Runs the operations encoded in `data` and checks the engine against the model.
pub fn check(data: &[u8]) -> Summary {
    let mut summary = Summary::default();
    let ops = decode(data);
    let dir = tempfile::tempdir().expect("a temporary directory for the lock file");
    let dir = dir.path();
    let seed = data
        .iter()
        .fold(0u64, |s, &b| s.rotate_left(5) ^ u64::from(b));
    let fs = FaultStorage::new(seed);
    let mut h = History {
        states: vec![Model::new()],
        durable: 0,
    };
    let mut db = open(&fs, dir);
    let mut armed = false;
    for (i, op) in ops.into_iter().enumerate() {
        let value = format!("v{i}").into_bytes();
        let t = tenant();
        let result = match op {
            Op::Put(k, d) => db.put(&t, Table::new(3), &[k], &value, d).map(|_| {
                h.push(|m| drop(m.insert(k, value.clone())));
                if d == Durability::SyncData {
                    h.mark_durable();
                }
            }),
            Op::Delete(k) => {
                let mut b = WriteBatch::new();
                b.delete(&t, Table::new(3), &[k]);
                db.write(&b, Durability::Buffered)
                    .map(|_| h.push(|m| drop(m.remove(&k))))
            }
            Op::DropTenant => db
                .drop_tenant(&t, Durability::Buffered)
                .map(|_| h.push(Model::clear)),
            Op::Flush => db.flush().map(|()| h.mark_durable()),
            Op::Compact => db.compact_all(),
            Op::Reopen => {
                if let Err(e) = db.close() {
                    assert!(armed, "op {i}: close failed with no fault armed: {e}");
                }
                fs.clear_faults();
                db = open(&fs, dir);
                armed = false;
                assert!(&dump(&db) == h.current(), "op {i}: clean reopen differs");
                Ok(())
            }
            Op::Crash(mode) => {
                summary.crashes += 1;
                drop(db);
                fs.crash(mode);
                db = open(&fs, dir);
                armed = false;
                let got = dump(&db);
                let k = (h.durable..h.states.len())
                    .rev()
                    .find(|&k| h.states[k] == got)
                    .unwrap_or_else(|| {
                        panic!(
                            "op {i}: crash state is no prefix from {} on: {got:?}",
                            h.durable
                        )
                    });
                h.states.truncate(k + 1);
                Ok(())
            }
            Op::Arm(fault) => {
                fs.inject(fault);
                armed = true;
                Ok(())
            }
        };
        if let Err(e) = result {
            assert!(armed, "op {i} {op:?} failed with no fault armed: {e}");
            summary.recoveries += 1;
            db = recover(
                Some(db),
                &fs,
                dir,
                &h,
                &format!("op {i} {op:?} failed ({e})"),
            );
            armed = false;
        }
    }
    drop(recover(Some(db), &fs, dir, &h, "end"));
    summary.faults_injected = fs.injected();
    summary
}
