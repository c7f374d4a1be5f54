//! Replays the committed seed corpus of the `tree_page_decode` fuzz target through the same
//! check the fuzzer runs (`fuzz/checks/tree_page_decode.rs`), so every CI run exercises it.
//!
//! Regenerate the seeds (after a format change) with
//! `cargo test -p memforest-tree --test fuzz_corpus -- --ignored regenerate_seeds`.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a panic is a failed assertion"
)]

#[path = "../../../fuzz/checks/tree_page_decode.rs"]
mod tree_page_decode;

mod common;

use std::path::PathBuf;

use common::{append, fact, summarize, tree};
use memforest_tree::refresh::refresh_all;
use memforest_tree::{MemNodeStore, MemTree, NodeId, NodeStore, PageKey, TreeId};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/tree_page_decode")
}

#[test]
fn tree_page_decode_seed_corpus() {
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 6, "seed corpus missing");
    for path in seeds {
        let bytes = std::fs::read(&path).unwrap();
        eprintln!("{}", path.display());
        tree_page_decode::check(&bytes);
        // Seeds named *.page are real pages and must decode.
        if path.extension().is_some_and(|e| e == "page") {
            assert!(
                memforest_tree::page::decode(&bytes).is_ok(),
                "{}",
                path.display()
            );
        }
    }
}

fn page(store: &MemNodeStore, t: &MemTree, node: NodeId) -> Vec<u8> {
    store.get(PageKey { tree: t.id(), node }).unwrap().unwrap()
}

/// Writes meaningful seeds: meta pages (empty and not), dirty and clean level-1 and branch
/// pages with and without summaries, and damaged variants.
#[test]
#[ignore = "writes fuzz/corpus/tree_page_decode/"]
fn regenerate_seeds() {
    let dir = corpus_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    let (mut store, mut t) = tree(4);
    seeds.push(("meta_empty.page".into(), page(&store, &t, NodeId::META)));
    append(&mut store, &mut t, 0, 20);
    t.insert(
        &mut store,
        fact(3, 100),
        "a late fact with a longer text: moved from Paris -> Berlin",
    )
    .unwrap();
    let path = t.path(&store, &fact(0, 0)).unwrap();
    seeds.push(("meta_dirty.page".into(), page(&store, &t, NodeId::META)));
    seeds.push(("branch_dirty.page".into(), page(&store, &t, path[0])));
    seeds.push((
        "bottom_dirty.page".into(),
        page(&store, &t, path[path.len() - 1]),
    ));
    refresh_all(&mut [&mut t], &mut store, summarize).unwrap();
    seeds.push(("branch_summarized.page".into(), page(&store, &t, path[0])));
    let bottom = page(&store, &t, path[path.len() - 1]);
    seeds.push(("bottom_summarized.page".into(), bottom.clone()));
    let mut flipped = bottom.clone();
    flipped[30] ^= 1;
    seeds.push(("bottom_bitflip.bin".into(), flipped));
    seeds.push((
        "bottom_truncated.bin".into(),
        bottom[..bottom.len() / 2].to_vec(),
    ));
    let reopened = MemTree::open(&store, TreeId(1)).unwrap();
    assert_eq!(reopened.meta(), t.meta());
    for (name, bytes) in seeds {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}
