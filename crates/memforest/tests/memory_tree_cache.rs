//! The per-tenant tree cache (`MemoryOptions::tree_cache_per_tenant`) is only a cache:
//! a store that drops every clean tree after each commit (limit 1) ends with exactly the
//! same trees, node pages, memberships and facts as one that keeps them all.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a panic is a failed assertion"
)]

mod memory_common;

use std::ops::Bound;
use std::sync::Arc;

use memforest::{schema::Table, Memory};
use memforest_benches::synth::{SynthConfig, SynthCorpus, SynthExtractor};
use memory_common::{options, tenant};

type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// Ingests the same synthetic sessions with tree cache `limit`; returns the rows of the
/// tables the write path fills.
fn ingest(limit: usize) -> Vec<Rows> {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(None);
    o.memory.extractor = Arc::new(SynthExtractor);
    o.memory.tree_cache_per_tenant = limit;
    let db = Memory::open_with(dir.path(), o).unwrap();
    let config = SynthConfig {
        people: 12,
        topics: 20,
        turns_per_session: 30,
        ..SynthConfig::default()
    };
    let mut corpus = SynthCorpus::new(config, 11);
    for _ in 0..8 {
        db.ingest_session(&tenant(), &corpus.session(30)).unwrap();
    }
    db.flush_summaries().unwrap();
    let rows = [
        Table::Trees,
        Table::NodePages,
        Table::Memberships,
        Table::Facts,
    ]
    .into_iter()
    .map(|table| {
        db.db()
            .scan(
                &tenant(),
                table.into(),
                Bound::Unbounded,
                Bound::Unbounded,
                None,
            )
            .unwrap()
            .map(|r| {
                let (k, v) = r.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect()
    })
    .collect();
    db.close().unwrap();
    rows
}

#[test]
fn dropping_clean_trees_from_the_cache_changes_nothing_stored() {
    let kept = ingest(usize::MAX);
    let dropped = ingest(1);
    let trees = kept[0].len();
    assert!(trees > 10, "only {trees} trees: the corpus must make many");
    for (table, (a, b)) in ["trees", "node pages", "memberships", "facts"]
        .iter()
        .zip(kept.iter().zip(&dropped))
    {
        assert_eq!(a.len(), b.len(), "{table}: row counts differ");
        assert!(a == b, "{table}: rows differ");
    }
}
