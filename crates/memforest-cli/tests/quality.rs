//! Retrieval quality on the real LoCoMo file (CC BY-NC, not
//! bundled: read from `../shared/data`): with k = 10 and the defaults (heuristic
//! extractor, extractive summarizer, the bundled static embedder, hybrid search),
//! MemForest's evidence turn recall@10 is at least the flat BM25 baseline's of the same
//! run overall and in every category, higher on multi-hop and temporal questions, and
//! higher than the flat dense baseline (same embedder) everywhere. Ignored by default (about 25 s in release, minutes in debug):
//!
//! ```sh
//! cargo test --release -p memforest-cli --test quality -- --ignored
//! ```
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a panic is a failed assertion"
)]

use std::path::Path;

use memforest::Options;
use memforest_cli::import::{self, Format};
use memforest_cli::{eval, ingest, store};

#[test]
#[ignore = "real data, ~25 s in release: cargo test --release -p memforest-cli --test quality -- --ignored"]
fn locomo_memforest_beats_flat_bm25_in_every_category() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/locomo/locomo10.json");
    assert!(path.is_file(), "{} is absent", path.display());
    let data = import::load(Format::Locomo, &path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = store::open(dir.path(), Options::default()).unwrap();
    ingest::run(&db, &data, false).unwrap();
    let r = eval::run(&db, &data, &eval::Settings::top(10)).unwrap();
    db.close().unwrap();
    eprintln!("{}", eval::render(&r));
    assert!(r.questions > 1900, "{} questions scored", r.questions);
    for (category, ours) in &r.recall_at_k {
        let dense = r.dense_baseline_recall_at_k.get(category).copied().unwrap();
        assert!(
            *ours > dense,
            "{category}: MemForest {ours:.3} not above flat dense {dense:.3}"
        );
        let theirs = r.baseline_recall_at_k.get(category).copied().unwrap();
        assert!(
            *ours >= theirs,
            "{category}: MemForest {ours:.3} < flat BM25 {theirs:.3}"
        );
        if category == "multi-hop" || category == "temporal" {
            assert!(
                *ours > theirs,
                "{category}: MemForest {ours:.3} not above flat BM25 {theirs:.3}"
            );
        }
    }
}
