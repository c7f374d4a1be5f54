//! Tenant isolation: randomised writes to many tenants (including names that are prefixes
//! of each other); every read and scan of a tenant returns exactly its own keys, before
//! and after flush, compaction, reopen and dropping other tenants.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::collections::BTreeMap;

use memforest_engine::{Db, Durability, Options, Table, TenantId, WriteBatch};
use rand::{Rng, SeedableRng};

type Model = BTreeMap<(String, u8, Vec<u8>), Vec<u8>>;

/// The tables written: any tags (the engine gives them no meaning); the last is dropped
/// with one range delete per tenant.
const TABLES: [Table; 4] = [
    Table::new(1),
    Table::new(2),
    Table::new(3),
    Table::new(0x40),
];

fn names() -> Vec<String> {
    // NUL is refused in new names (`TenantId::new`) but a store written before that may
    // hold one: `TenantId::from_stored` names it, and it must stay isolated and listable.
    let mut v: Vec<String> = ["a", "aa", "a\u{0}", "a\u{1}", "ab", "b", "\u{1}", "a\u{ff}"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend((0..13).map(|i| format!("user-{i}")));
    v
}

fn check(db: &Db, model: &Model, names: &[String]) {
    for name in names {
        let t = TenantId::from_stored(name).unwrap();
        let got: Vec<(u8, Vec<u8>, Vec<u8>)> = db
            .scan_tenant(&t, None)
            .unwrap()
            .map(|r| {
                let (k, v) = r.unwrap();
                (k[0], k[1..].to_vec(), v.to_vec())
            })
            .collect();
        let want: Vec<(u8, Vec<u8>, Vec<u8>)> = model
            .iter()
            .filter(|((n, _, _), _)| n == name)
            .map(|((_, tag, k), v)| (*tag, k.clone(), v.clone()))
            .collect();
        assert_eq!(got, want, "tenant {name:?}");
        // Point reads of keys written by any tenant: only this tenant's own value.
        for (_, tag, k) in model.keys().step_by(7) {
            let table = Table::new(*tag);
            let expect = model.get(&(name.clone(), *tag, k.clone())).cloned();
            assert_eq!(db.get(&t, table, k).unwrap().map(|b| b.to_vec()), expect);
        }
    }
}

#[test]
fn every_read_of_a_tenant_sees_only_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        memtable_size: 8 << 10,
        l0_compaction_trigger: 2,
        target_file_size: 8 << 10,
        max_bytes_for_level_base: 32 << 10,
        ..Options::default()
    };
    let mut db = Db::open(dir.path(), options.clone()).unwrap();
    let names = names();
    let mut model = Model::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for round in 0..6 {
        for _ in 0..200 {
            let mut b = WriteBatch::new();
            for _ in 0..rng.gen_range(1..5) {
                let name = &names[rng.gen_range(0..names.len())];
                let t = TenantId::from_stored(name).unwrap();
                let table = TABLES[rng.gen_range(0..TABLES.len())];
                let key = vec![rng.gen_range(0..8u8), rng.gen_range(0..255u8)];
                let value = vec![rng.gen::<u8>(); rng.gen_range(0..20)];
                b.put(&t, table, &key, &value);
                model.insert((name.clone(), table.tag(), key), value);
            }
            db.write(&b, Durability::Buffered).unwrap();
        }
        check(&db, &model, &names);
        match round {
            1 => db.flush().unwrap(),
            2 => db.compact_all().unwrap(),
            3 => {
                db.close().unwrap();
                db = Db::open(dir.path(), options.clone()).unwrap();
            }
            4 => {
                let victim = &names[0];
                db.drop_tenant(
                    &TenantId::from_stored(victim).unwrap(),
                    Durability::Buffered,
                )
                .unwrap();
                model.retain(|(n, _, _), _| n != victim);
            }
            _ => {}
        }
        check(&db, &model, &names);
    }
    let listed: Vec<String> = db
        .tenants()
        .unwrap()
        .iter()
        .map(|t| String::from_utf8(t.name().to_vec()).unwrap())
        .collect();
    let mut want: Vec<String> = model.keys().map(|(n, _, _)| n.clone()).collect();
    want.dedup();
    let mut listed_sorted = listed.clone();
    listed_sorted.sort_by_key(|n| TenantId::from_stored(n).unwrap());
    assert_eq!(listed, listed_sorted);
    want.sort_by_key(|n| TenantId::from_stored(n).unwrap());
    want.dedup();
    assert_eq!(listed, want);
    let dropped = TABLES[3];
    let mut b = WriteBatch::new();
    for tenant in db.tenants().unwrap() {
        b.delete_table(&tenant, dropped);
    }
    db.write(&b, Durability::Buffered).unwrap();
    model.retain(|(_, tag, _), _| *tag != dropped.tag());
    check(&db, &model, &names);
}
