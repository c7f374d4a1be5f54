//! Model test: random operations against the engine and a `BTreeMap`, including snapshot
//! reads, flushes, compactions, clean reopens and crash reopens (drop without close).
//!
//! Writes use `Durability::Buffered`; a crash reopen drops the `Db` without `close`, which
//! leaves acknowledged writes in the OS page cache exactly as a killed process would, so
//! the model loses nothing. (Power loss is the SIGKILL crash test's and the WAL's concern.)

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::collections::BTreeMap;
use std::ops::Bound;

use memforest_engine::{Db, Durability, Options, Snapshot, Table, TenantId, WriteBatch};
use proptest::prelude::*;

const TENANTS: [&str; 3] = ["a", "ab", "b"];
const TABLES: [Table; 2] = [Table::new(3), Table::new(0x40)];

type Model = BTreeMap<(usize, usize, Vec<u8>), Vec<u8>>;

#[derive(Debug, Clone)]
enum Op {
    Put(usize, usize, u8, u8),
    Delete(usize, usize, u8),
    RangeDelete(usize, usize, u8, u8),
    DropTenant(usize),
    Get(usize, usize, u8),
    Scan(usize, usize, u8, u8),
    TakeSnapshot,
    CheckSnapshot(usize),
    ReleaseSnapshot(usize),
    Flush,
    Compact,
    Reopen,
    CrashReopen,
}

fn op() -> impl Strategy<Value = Op> {
    let t = 0..TENANTS.len();
    let tb = 0..TABLES.len();
    prop_oneof![
        12 => (t.clone(), tb.clone(), 0u8..40, any::<u8>()).prop_map(|(a, b, k, v)| Op::Put(a, b, k, v)),
        3 => (t.clone(), tb.clone(), 0u8..40).prop_map(|(a, b, k)| Op::Delete(a, b, k)),
        1 => (t.clone(), tb.clone(), 0u8..40, 0u8..40).prop_map(|(a, b, x, y)| Op::RangeDelete(a, b, x, y)),
        1 => t.clone().prop_map(Op::DropTenant),
        4 => (t.clone(), tb.clone(), 0u8..40).prop_map(|(a, b, k)| Op::Get(a, b, k)),
        2 => (t, tb, 0u8..40, 0u8..40).prop_map(|(a, b, x, y)| Op::Scan(a, b, x, y)),
        1 => Just(Op::TakeSnapshot),
        2 => (0usize..4).prop_map(Op::CheckSnapshot),
        1 => (0usize..4).prop_map(Op::ReleaseSnapshot),
        1 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
        1 => Just(Op::CrashReopen),
    ]
}

fn options() -> Options {
    Options {
        memtable_size: 2 << 10,
        l0_compaction_trigger: 2,
        max_bytes_for_level_base: 8 << 10,
        target_file_size: 2 << 10,
        num_levels: 4,
        ..Options::default()
    }
}

fn key(k: u8) -> Vec<u8> {
    format!("k{k:02}").into_bytes()
}

fn tenant(i: usize) -> TenantId {
    TenantId::new(TENANTS[i]).unwrap()
}

/// Everything the engine shows at `snap` (now when `None`).
fn dump(db: &Db, snap: Option<&Snapshot>) -> Model {
    let mut out = Model::new();
    for t in 0..TENANTS.len() {
        for (tb, table) in TABLES.iter().enumerate() {
            let scan = db
                .scan(&tenant(t), *table, Bound::Unbounded, Bound::Unbounded, snap)
                .unwrap();
            for item in scan {
                let (k, v) = item.unwrap();
                out.insert((t, tb, k.to_vec()), v.to_vec());
            }
        }
    }
    out
}

fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Some(Db::open(dir.path(), options()).unwrap());
    let mut model = Model::new();
    let mut snaps: Vec<(Snapshot, Model)> = Vec::new();
    for op in ops {
        let d = db.as_ref().unwrap();
        let mut b = WriteBatch::new();
        match op {
            Op::Put(t, tb, k, v) => {
                b.put(&tenant(t), TABLES[tb], &key(k), &[v]);
                model.insert((t, tb, key(k)), vec![v]);
            }
            Op::Delete(t, tb, k) => {
                b.delete(&tenant(t), TABLES[tb], &key(k));
                model.remove(&(t, tb, key(k)));
            }
            Op::RangeDelete(t, tb, x, y) => {
                b.delete_range(&tenant(t), TABLES[tb], &key(x), &key(y));
                model.retain(|(mt, mtb, mk), _| {
                    !(*mt == t && *mtb == tb && *mk >= key(x) && *mk < key(y))
                });
            }
            Op::DropTenant(t) => {
                d.drop_tenant(&tenant(t), Durability::Buffered).unwrap();
                model.retain(|(mt, _, _), _| *mt != t);
            }
            Op::Get(t, tb, k) => {
                let got = d.get(&tenant(t), TABLES[tb], &key(k)).unwrap();
                assert_eq!(
                    got.map(|v| v.to_vec()),
                    model.get(&(t, tb, key(k))).cloned()
                );
            }
            Op::Scan(t, tb, x, y) => {
                let (lo, hi) = (key(x.min(y)), key(x.max(y)));
                let got: Vec<_> = d
                    .scan(
                        &tenant(t),
                        TABLES[tb],
                        Bound::Included(&lo),
                        Bound::Excluded(&hi),
                        None,
                    )
                    .unwrap()
                    .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
                    .collect();
                let want: Vec<_> = model
                    .range((t, tb, lo)..(t, tb, hi))
                    .map(|((_, _, k), v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(got, want);
            }
            Op::TakeSnapshot => snaps.push((d.snapshot(), model.clone())),
            Op::CheckSnapshot(i) => {
                if let Some((s, m)) = snaps.get(i) {
                    assert_eq!(&dump(d, Some(s)), m, "snapshot {i} at seqno {}", s.seqno());
                }
            }
            Op::ReleaseSnapshot(i) => {
                if i < snaps.len() {
                    snaps.remove(i);
                }
            }
            Op::Flush => d.flush().unwrap(),
            Op::Compact => d.compact_all().unwrap(),
            Op::Reopen | Op::CrashReopen => {
                snaps.clear();
                let old = db.take().unwrap();
                if matches!(op, Op::Reopen) {
                    old.close().unwrap();
                } else {
                    drop(old);
                }
                db = Some(Db::open(dir.path(), options()).unwrap());
            }
        }
        if !b.is_empty() {
            db.as_ref()
                .unwrap()
                .write(&b, Durability::Buffered)
                .unwrap();
        }
    }
    let d = db.as_ref().unwrap();
    assert_eq!(dump(d, None), model);
    for (s, m) in &snaps {
        assert_eq!(&dump(d, Some(s)), m);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_btreemap(ops in proptest::collection::vec(op(), 1..120)) {
        run(ops);
    }
}
