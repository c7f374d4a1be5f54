//! The lexical index records the version of its terms (`recall::index::INDEX_VERSION`): an
//! index built by an older tokenizer (no version key: whole runs of CJK characters as
//! terms, which a query's bigrams never match) is deleted and rebuilt from the facts by the
//! first query, and the Chinese question finds its fact. An ingest after the index was
//! dropped rebuilds it before adding its own facts.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

#[path = "memory_common/mod.rs"]
mod common;

use common::*;
use memforest::recall::index::{term_prefix, INDEX_VERSION, VERSION_KEY};
use memforest::recall::Query;
use memforest::schema::Table;
use memforest::Memory;
use memforest_engine::{Durability, WriteBatch};

fn version(db: &Memory) -> Option<Vec<u8>> {
    let v = db.db().get(&tenant(), Table::Postings.into(), VERSION_KEY);
    v.unwrap().map(|b| b.to_vec())
}

#[test]
fn a_version_1_index_is_rebuilt_by_the_first_query() {
    let dir = tempfile::tempdir().unwrap();
    let t = tenant();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    let turns = [
        "科幻电影，如果你喜欢可以去看一下《流浪地球》。",
        "好的，我这个周末就去电影院看。",
    ];
    db.ingest_session(&t, &session("s", 0, &turns)).unwrap();
    let current = Some(INDEX_VERSION.to_le_bytes().to_vec());
    assert_eq!(version(&db), current, "a new index says its version");

    let mut stale = term_prefix("科幻电影");
    stale.extend_from_slice(&1u64.to_be_bytes());
    let mut b = WriteBatch::new();
    b.delete(&t, Table::Postings.into(), VERSION_KEY);
    b.put(
        &t,
        Table::Postings.into(),
        &stale,
        &[1, 0, 0, 0, 9, 0, 0, 0],
    );
    db.db().write(&b, Durability::SyncData).unwrap();

    let r = db
        .query(
            &t,
            &Query::new("我曾经和你推荐过一部科幻电影，它的名字是？"),
        )
        .unwrap();
    assert!(
        r.facts.first().is_some_and(|f| f.text.contains("流浪地球")),
        "{:?}",
        r.facts.iter().map(|f| &f.text).collect::<Vec<_>>()
    );
    assert_eq!(version(&db), current, "rebuilt at this version");
    let left = db.db().get(&t, Table::Postings.into(), &stale).unwrap();
    assert!(left.is_none(), "the old index's terms are gone");
    db.close().unwrap();
}

#[test]
fn an_ingest_after_the_index_was_dropped_rebuilds_it_first() {
    // `drop_derived` removes the index; an ingest before any query used to index only its
    // own facts and mark that index complete, so the older facts were never found again.
    let dir = tempfile::tempdir().unwrap();
    let t = tenant();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    let old = ["My sister Nadia moved to Porto last spring."];
    db.ingest_session(&t, &session("a", 0, &old)).unwrap();
    db.drop_derived(Durability::SyncData).unwrap();
    let new = ["The bakery on the corner sells rye bread."];
    db.ingest_session(&t, &session("b", 1, &new)).unwrap();
    for (question, answer) in [
        ("Where did Nadia move?", "Porto"),
        ("Who sells rye bread?", "rye bread"),
    ] {
        let r = db.query(&t, &Query::new(question)).unwrap();
        assert!(
            r.facts.first().is_some_and(|f| f.text.contains(answer)),
            "{question}: {:?}",
            r.facts.iter().map(|f| &f.text).collect::<Vec<_>>()
        );
    }
}
