//! Model test at scale: many operations across several tenants, with the flushes and
//! compactions they trigger, a reopen, and a full comparison against a `BTreeMap`.
//!
//! `MEMFOREST_SCALE_OPS` sets the operation count. CI runs the default (200 000, a few
//! seconds in debug); the 1 M run is
//! `MEMFOREST_SCALE_OPS=1000000 cargo test --release -p memforest-engine --test scale`.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::collections::BTreeMap;
use std::ops::Bound;

use memforest_engine::{Db, Durability, Options, Table, TenantId, WriteBatch};
use rand::{Rng, SeedableRng};

const TENANTS: usize = 8;

#[test]
fn many_operations_match_the_model_after_reopen() {
    let ops: usize = std::env::var("MEMFOREST_SCALE_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        memtable_size: 512 << 10,
        target_file_size: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        ..Options::default()
    };
    let tenants: Vec<TenantId> = (0..TENANTS)
        .map(|i| TenantId::new(format!("tenant-{i}")).unwrap())
        .collect();
    let mut model: BTreeMap<(usize, Vec<u8>), Vec<u8>> = BTreeMap::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let db = Db::open(dir.path(), options.clone()).unwrap();
    let mut done = 0;
    while done < ops {
        let mut b = WriteBatch::new();
        for _ in 0..100 {
            let t = rng.gen_range(0..TENANTS);
            let key = format!("{:08}", rng.gen_range(0..(ops as u32 / 4).max(1000))).into_bytes();
            match rng.gen_range(0..100) {
                0..=79 => {
                    let value = format!("v{done}").into_bytes();
                    b.put(&tenants[t], Table::new(3), &key, &value);
                    model.insert((t, key), value);
                }
                80..=98 => {
                    b.delete(&tenants[t], Table::new(3), &key);
                    model.remove(&(t, key));
                }
                _ => {
                    let end =
                        format!("{:08}", rng.gen_range(0..(ops as u32 / 4).max(1000))).into_bytes();
                    let (lo, hi) = if key < end { (key, end) } else { (end, key) };
                    b.delete_range(&tenants[t], Table::new(3), &lo, &hi);
                    model.retain(|(mt, k), _| !(*mt == t && *k >= lo && *k < hi));
                }
            }
            done += 1;
        }
        db.write(&b, Durability::Buffered).unwrap();
    }
    let stats = db.stats();
    assert!(stats.flush_count >= 3, "{stats:?}");
    assert!(stats.compaction_count >= 1, "{stats:?}");
    db.close().unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    for (t, tenant) in tenants.iter().enumerate() {
        let got: Vec<(Vec<u8>, Vec<u8>)> = db
            .scan(
                tenant,
                Table::new(3),
                Bound::Unbounded,
                Bound::Unbounded,
                None,
            )
            .unwrap()
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
            .collect();
        let want: Vec<(Vec<u8>, Vec<u8>)> = model
            .range((t, Vec::new())..(t + 1, Vec::new()))
            .map(|((_, k), v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(got.len(), want.len(), "tenant {t}");
        assert!(got == want, "tenant {t} differs");
    }
}
