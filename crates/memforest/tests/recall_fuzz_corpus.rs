//! Runs the `recall_bm25` fuzz check (`fuzz/checks/recall_bm25.rs`) over its seed corpus,
//! so CI exercises it on every run.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

#[path = "../../../fuzz/checks/recall_bm25.rs"]
mod recall_bm25;

use std::path::Path;

#[test]
fn recall_bm25_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/recall_bm25");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        recall_bm25::check(&std::fs::read(entry.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 6, "only {n} seeds");
}
