//! Chinese, Japanese and Korean conversations become facts and their evidence
//! is found. The sets are written for these tests, in the LoCoMo layout, under
//! `tests/data/cjk/`: `chinese.json` (three conversations of four or five sessions on
//! different dates, 140 turns, 56 single-hop, multi-hop and temporal questions),
//! `japanese.json` and
//! `korean.json` (one conversation of two sessions, four questions each). Lexical mode,
//! the default extractor and summarizer, k = 10, as `memforest eval`:
//!
//! ```sh
//! memforest eval --db DIR --format locomo crates/memforest-cli/tests/data/cjk/chinese.json
//! ```
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a panic is a failed assertion"
)]

use std::path::Path;

use memforest::Options;
use memforest_cli::eval::EvalReport;
use memforest_cli::import::{self, Format};
use memforest_cli::{eval, ingest, store};

/// Ingests `tests/data/cjk/<name>` into an empty store and evaluates it: the new facts and
/// the report.
fn evaluate(name: &str) -> (u64, EvalReport) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cjk")
        .join(name);
    let data = import::load(Format::Locomo, &path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = store::open(dir.path(), Options::default()).unwrap();
    let ingested = ingest::run(&db, &data, false).unwrap();
    let report = eval::run(&db, &data, &eval::Settings::top(10)).unwrap();
    db.close().unwrap();
    eprintln!(
        "{name}: {} facts\n{}",
        ingested.facts,
        eval::render(&report)
    );
    (ingested.facts, report)
}

fn recall(r: &EvalReport, category: &str) -> (f64, f64) {
    let ours = r.recall_at_k.get(category).copied().unwrap();
    let flat = r.baseline_recall_at_k.get(category).copied().unwrap();
    (ours, flat)
}

#[test]
fn chinese_evidence_recall_at_10_reaches_0_85_above_flat_bm25() {
    let (facts, r) = evaluate("chinese.json");
    assert_eq!(r.questions, 56);
    assert!(facts >= 100, "{facts} facts from 140 turns");
    let (ours, flat) = recall(&r, "all");
    assert!(ours >= 0.85, "recall@10 {ours:.3}");
    assert!(
        ours > flat,
        "MemForest {ours:.3} not above flat BM25 {flat:.3}"
    );
    for category in ["single-hop", "multi-hop", "temporal"] {
        let (ours, flat) = recall(&r, category);
        assert!(ours >= flat, "{category}: {ours:.3} < flat BM25 {flat:.3}");
    }
}

#[test]
fn japanese_and_korean_turns_become_facts_and_their_evidence_is_found() {
    for name in ["japanese.json", "korean.json"] {
        let (facts, r) = evaluate(name);
        assert_eq!(r.questions, 4, "{name}");
        assert!(facts >= 10, "{name}: {facts} facts from 12 turns");
        let (ours, _) = recall(&r, "all");
        assert!(ours >= 0.99, "{name}: recall@10 {ours:.3}");
    }
}
