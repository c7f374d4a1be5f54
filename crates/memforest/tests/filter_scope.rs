//! The memory store's filter scope ([`PointReadKeys`]) leaves its scan-only keys (lexical
//! postings, the fact time index) out of segment bloom filters; point reads of them still
//! find them from the index, with the scope and with a store reopened without one.
#![allow(clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;

use memforest::filter_scope::PointReadKeys;
use memforest::schema::Table;
use memforest_engine::{Db, Durability, Options, TenantId};

fn options(scoped: bool) -> Options {
    let mut o = Options {
        memtable_size: 16 << 10,
        l0_compaction_trigger: 2,
        max_bytes_for_level_base: 64 << 10,
        target_file_size: 16 << 10,
        ..Options::default()
    };
    if scoped {
        o.sst.filter_scope = Some(Arc::new(PointReadKeys));
    }
    o
}

#[test]
fn keys_left_out_of_filters_are_still_found() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::new("t").unwrap();
    let keys: Vec<(Table, Vec<u8>)> = (0..200u32)
        .flat_map(|i| {
            [
                (Table::Postings, format!("tword{i}\0").into_bytes()),
                (Table::Postings, format!("o{i:08}").into_bytes()),
                (Table::FactTimeIndex, i.to_be_bytes().to_vec()),
                (Table::Facts, i.to_be_bytes().to_vec()),
            ]
        })
        .collect();
    let all_found = |db: &Db| {
        for (table, key) in &keys {
            assert_eq!(
                db.get(&t, (*table).into(), key).unwrap().as_deref(),
                Some(&key[..]),
                "{table:?} {key:?}"
            );
        }
    };
    {
        let db = Db::open(dir.path(), options(true)).unwrap();
        for (table, key) in &keys {
            db.put(&t, (*table).into(), key, key, Durability::Buffered)
                .unwrap();
        }
        db.flush().unwrap();
        assert!(db.stats().flush_count >= 1);
        all_found(&db);
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), options(false)).unwrap();
    all_found(&db);
}
