//! Property: across random interleavings of new sessions, appended turns, duplicate turns
//! and mid-way flushes, after `flush_summaries()` every tree is clean and every internal
//! node's summary matches the hash of its current children (also after a reopen).
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

#[path = "memory_common/mod.rs"]
mod common;

use common::*;
use memforest::Memory;
use proptest::prelude::*;

const WORDS: [&str; 8] = [
    "Paris",
    "tea",
    "marathon",
    "Jordan",
    "garden",
    "5 km",
    "piano",
    "yesterday",
];

/// One step: (session 0..4, turns to append 1..4, word seed, flush afterwards).
fn steps() -> impl Strategy<Value = Vec<(u8, u8, u8, bool)>> {
    prop::collection::vec((0u8..4, 1u8..4, any::<u8>(), any::<bool>()), 1..12)
}

fn text(seed: u8, i: usize) -> String {
    let a = WORDS[usize::from(seed) % WORDS.len()];
    let b = WORDS[(usize::from(seed) / 8 + i) % WORDS.len()];
    format!(
        "I talked about {a} and {b} with Sam {}.",
        usize::from(seed) % 3
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn summaries_match_children_after_flush(steps in steps()) {
        let dir = tempfile::tempdir().unwrap();
        let db = Memory::open_with(dir.path(), options(None)).unwrap();
        let mut sessions: Vec<Vec<String>> = vec![Vec::new(); 4];
        for (s, n, seed, flush) in steps {
            let turns = &mut sessions[usize::from(s)];
            for i in 0..usize::from(n) {
                turns.push(text(seed, i));
            }
            let refs: Vec<&str> = turns.iter().map(String::as_str).collect();
            db.ingest_session(&tenant(), &session(&format!("s{s}"), i64::from(s), &refs)).unwrap();
            if flush {
                db.flush_summaries().unwrap();
            }
        }
        db.flush_summaries().unwrap();
        prop_assert!(assert_summaries_current(&db) > 0);
        drop(db);
        let db = Memory::open_with(dir.path(), options(None)).unwrap();
        prop_assert!(assert_summaries_current(&db) > 0);
        db.close().unwrap();
    }
}
