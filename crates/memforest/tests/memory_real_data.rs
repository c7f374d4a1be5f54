//! Smoke test on real conversations: a few LoCoMo sessions and LongMemEval histories from
//! `../shared/data` (skipped, with a note, when the data is absent).
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

#[path = "memory_common/mod.rs"]
mod common;

use std::path::PathBuf;

use memforest::memory::dataset;
use memforest::Memory;
use memforest_engine::TenantId;

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    dir.join("locomo/locomo10.json").exists().then_some(dir)
}

#[test]
fn ingests_real_conversations() {
    let Some(data) = data_dir() else {
        eprintln!("note: ../shared/data not found; real-data smoke test skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), common::options(None)).unwrap();
    let locomo = dataset::locomo(&data.join("locomo/locomo10.json")).unwrap();
    assert_eq!(locomo.len(), 10);
    let lme = dataset::longmemeval(&data.join("longmemeval/longmemeval_oracle.json")).unwrap();
    assert_eq!(lme.len(), 500);
    for conv in locomo.iter().take(1).chain(lme.iter().take(3)) {
        let tenant = TenantId::new(&conv.name).unwrap();
        let (mut turns, mut facts) = (0, 0);
        for s in conv.sessions.iter().take(4) {
            let r = db.ingest_session(&tenant, s).unwrap();
            assert_eq!(r.turns, s.turns.len() as u64);
            assert!(s.start > 0, "session date parsed");
            turns += r.turns;
            facts += r.facts_added;
        }
        assert!(
            turns > 0 && facts > 0,
            "{}: {turns} turns, {facts} facts",
            conv.name
        );
    }
    db.flush_summaries().unwrap();
    assert!(db.memory_stats().dirty_by_level.iter().all(|n| *n == 0));
    db.close().unwrap();
}
